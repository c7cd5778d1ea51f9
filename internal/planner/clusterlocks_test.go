package planner

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// holderIn is a slot of a ClusterOaatLock held by the run of a group of another namespace.
func holderIn(namespace, group string) v1alpha1.LockHolder {
	h := otherHolder(group)
	h.Namespace = namespace
	return h
}

var selected = map[string]string{"team": "backup"}

func TestClusterLockNotPermittedMakesTheGroupNotReady(t *testing.T) {
	g := newGroup("a")
	g.Spec.ClusterLocks = []string{"db"}
	p := Decide(mixedInput(g, 0, []v1alpha1.Lock{builders.ClusterLock("db", 1)}, map[string]string{"team": "web"}, nil))
	c := condition(t, p, v1alpha1.ConditionReady)
	if c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonLockNotPermitted) ||
		!strings.Contains(c.Message, "ClusterOaatLock db") || !strings.Contains(c.Message, "namespace ns") {
		t.Fatalf("Ready = %+v", c)
	}
	if p.Create != nil || p.Status.LockWait != nil {
		t.Fatalf("create %v, lockWait %+v in a namespace the lock does not select: want no run and no request", p.Create, p.Status.LockWait)
	}

	// The namespace gains the label: the same group is Ready and asks for the lock, then starts
	// once the lock lists its request.
	pod := podName(g, "a", 1)
	p = Decide(mixedInput(g, time.Minute, []v1alpha1.Lock{builders.ClusterLock("db", 1)}, selected, nil))
	if c := condition(t, p, v1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v after the namespace was labelled", c)
	}
	checkWaiting(t, p, request(time.Minute, "a", pod, []string{"ClusterOaatLock/db"}))
	p = Decide(mixedInput(applied(g, p), 2*time.Minute, []v1alpha1.Lock{builders.ClusterLock("db", 1, grantIn("ns", pod))}, selected, nil))
	checkStarted(t, p, "a", pod, &waitedView{Locks: []string{"ClusterOaatLock/db"}, Waited: time.Minute})
}

// grantIn is a ClusterOaatLock's holder for the request of the group backups of the namespace
// (UID backups-uid) for pod.
func grantIn(namespace, pod string) v1alpha1.LockHolder {
	h := grant(pod)
	h.Namespace = namespace
	return h
}

func TestMissingClusterLockMakesTheGroupNotReady(t *testing.T) {
	g := newGroup("a")
	g.Spec.ClusterLocks = []string{"db"}
	p := Decide(mixedInput(g, 0, nil, selected, nil))
	c := condition(t, p, v1alpha1.ConditionReady)
	if c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonLockNotFound) || !strings.Contains(c.Message, `ClusterOaatLock "db"`) {
		t.Fatalf("Ready = %+v", c)
	}
}

// TestMixedLocksAllOrNone: a group naming an OaatLock and a ClusterOaatLock starts only once both
// list its request; its request names those that do not, and it yields a grant of one to an
// earlier waiter of it while it waits for the other, whatever the lock's kind.
func TestMixedLocksAllOrNone(t *testing.T) {
	pod := podName(newGroup("a"), "a", 1)
	// A group of the same name in another namespace is another group: its slot is not ours.
	sameNameElsewhere := holderIn("other-ns", "backups")
	sameNameElsewhere.Pod, sameNameElsewhere.GroupUID = pod, "other-ns-backups-uid"
	tests := []struct {
		name       string
		locks      []v1alpha1.Lock
		waiters    []locks.Waiter
		wantWait   *v1alpha1.LockWait
		wantWaited *waitedView
	}{
		{name: "both list the request: the run starts",
			locks:      []v1alpha1.Lock{builders.Lock("nas", 1, grant(pod)), builders.ClusterLock("db", 1, grantIn("ns", pod))},
			wantWaited: &waitedView{Locks: []string{"ClusterOaatLock/db", "nas"}, Waited: time.Minute}},
		{name: "neither lists it: the group asks both",
			locks:    []v1alpha1.Lock{builders.Lock("nas", 1), builders.ClusterLock("db", 1)},
			wantWait: request(-time.Minute, "a", pod, []string{"ClusterOaatLock/db", "nas"})},
		{name: "the cluster lock does not list it: the run does not start on the OaatLock's grant alone",
			locks:    []v1alpha1.Lock{builders.Lock("nas", 1, grant(pod)), builders.ClusterLock("db", 1, sameNameElsewhere)},
			wantWait: request(-time.Minute, "a", pod, []string{"ClusterOaatLock/db"})},
		{name: "the OaatLock does not list it: the run does not start on the cluster lock's grant alone",
			locks:    []v1alpha1.Lock{builders.Lock("nas", 1, otherHolder("other")), builders.ClusterLock("db", 2, grantIn("ns", pod))},
			wantWait: request(-time.Minute, "a", pod, []string{"nas"})},
		{name: "the cluster lock's grant is yielded to an earlier waiter of another namespace",
			locks: []v1alpha1.Lock{builders.Lock("nas", 1, otherHolder("other")), builders.ClusterLock("db", 2, grantIn("ns", pod))},
			waiters: []locks.Waiter{{Place: locks.Place{Since: t0.Add(-time.Hour), Namespace: "third", Group: "backups"},
				Pod: "third-pod", Locks: []string{"ClusterOaatLock/db"}}},
			wantWait: request(-time.Minute, "a", pod, []string{"ClusterOaatLock/db", "nas"}, "ClusterOaatLock/db")},
		{name: "a younger waiter of another namespace: nothing yielded",
			locks: []v1alpha1.Lock{builders.Lock("nas", 1, otherHolder("other")), builders.ClusterLock("db", 2, grantIn("ns", pod))},
			waiters: []locks.Waiter{{Place: locks.Place{Since: t0.Add(time.Hour), Namespace: "third", Group: "backups"},
				Pod: "third-pod", Locks: []string{"ClusterOaatLock/db"}}},
			wantWait: request(-time.Minute, "a", pod, []string{"nas"})},
		{name: "an earlier waiter of an OaatLock of the same name does not take the cluster lock's grant",
			locks: []v1alpha1.Lock{builders.Lock("nas", 1, otherHolder("other")), builders.ClusterLock("db", 2, grantIn("ns", pod))},
			waiters: []locks.Waiter{{Place: locks.Place{Since: t0.Add(-time.Hour), Namespace: "ns", Group: "older"},
				Pod: "older-pod", Locks: []string{"db"}}},
			wantWait: request(-time.Minute, "a", pod, []string{"nas"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGroup("a")
			for _, l := range tt.locks {
				if l.GetNamespace() == "" {
					g.Spec.ClusterLocks = append(g.Spec.ClusterLocks, l.GetName())
				} else {
					g.Spec.Locks = append(g.Spec.Locks, l.GetName())
				}
			}
			g.Status.LockWait = request(-time.Minute, "a", pod, []string{"ClusterOaatLock/db", "nas"})
			p := Decide(mixedInput(g, 0, tt.locks, selected, tt.waiters))
			if tt.wantWait != nil {
				checkWaiting(t, p, tt.wantWait)
				return
			}
			checkStarted(t, p, "a", pod, tt.wantWaited)
		})
	}
}

func TestDescribeLocks(t *testing.T) {
	tests := map[string][]string{
		"OaatLock nas":                          {"nas"},
		"OaatLock db, nas":                      {"db", "nas"},
		"ClusterOaatLock db":                    {"ClusterOaatLock/db"},
		"OaatLock nas and ClusterOaatLock a, b": {"ClusterOaatLock/a", "nas", "ClusterOaatLock/b"},
	}
	for want, keys := range tests {
		if got := v1alpha1.DescribeLocks(keys); got != want {
			t.Errorf("DescribeLocks(%q) = %q, want %q", keys, got, want)
		}
	}
}
