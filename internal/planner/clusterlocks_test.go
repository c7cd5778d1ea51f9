package planner

import (
	"slices"
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
	if p.Create != nil || len(p.Locks.Acquire) > 0 {
		t.Fatalf("create %v, acquired %v in a namespace the lock does not select", p.Create, acquired(p))
	}

	// The namespace gains the label: the same group is Ready and runs.
	p = Decide(mixedInput(g, time.Minute, []v1alpha1.Lock{builders.ClusterLock("db", 1)}, selected, nil))
	if c := condition(t, p, v1alpha1.ConditionReady); c.Status != metav1.ConditionTrue || p.Create == nil {
		t.Fatalf("Ready = %+v, create %v after the namespace was labelled", c, p.Create)
	}
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

func TestMixedLocksAllOrNone(t *testing.T) {
	// A group of the same name in another namespace is another group: its slot is not ours.
	sameNameElsewhere := holderIn("other-ns", "backups")
	tests := []struct {
		name        string
		locks       []v1alpha1.Lock
		waiters     []locks.Waiter
		wantStart   bool
		wantAcquire []string
		wantWaitFor []string
	}{
		{name: "both free", locks: []v1alpha1.Lock{builders.Lock("nas", 1), builders.ClusterLock("db", 1)},
			wantStart: true, wantAcquire: []string{"ClusterOaatLock/db", "nas"}},
		{name: "cluster lock full: the free OaatLock is not taken either",
			locks:       []v1alpha1.Lock{builders.Lock("nas", 1), builders.ClusterLock("db", 1, sameNameElsewhere)},
			wantWaitFor: []string{"ClusterOaatLock/db"}},
		{name: "OaatLock full: the free cluster lock is not taken either",
			locks:       []v1alpha1.Lock{builders.Lock("nas", 1, otherHolder("other")), builders.ClusterLock("db", 2, sameNameElsewhere)},
			wantWaitFor: []string{"nas"}},
		{name: "the free cluster slot is kept for an older waiter of another namespace",
			locks: []v1alpha1.Lock{builders.Lock("nas", 1), builders.ClusterLock("db", 2, sameNameElsewhere)},
			waiters: []locks.Waiter{{Namespace: "third", Group: "backups", Since: t0.Add(-time.Hour),
				Locks: []string{"ClusterOaatLock/db"}}},
			wantWaitFor: []string{"ClusterOaatLock/db"}},
		{name: "a younger waiter of another namespace does not hold it back",
			locks: []v1alpha1.Lock{builders.Lock("nas", 1), builders.ClusterLock("db", 2, sameNameElsewhere)},
			waiters: []locks.Waiter{{Namespace: "third", Group: "backups", Since: t0.Add(time.Hour),
				Locks: []string{"ClusterOaatLock/db"}}},
			wantStart: true, wantAcquire: []string{"ClusterOaatLock/db", "nas"}},
		{name: "an older waiter on an OaatLock of the same name does not claim the cluster lock",
			locks: []v1alpha1.Lock{builders.ClusterLock("db", 1)},
			waiters: []locks.Waiter{{Namespace: "ns", Group: "older", Since: t0.Add(-time.Hour),
				Locks: []string{"db"}}},
			wantStart: true, wantAcquire: []string{"ClusterOaatLock/db"}},
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
			p := Decide(mixedInput(g, 0, tt.locks, selected, tt.waiters))
			if started := p.Create != nil; started != tt.wantStart {
				t.Fatalf("started = %v, want %v (lockWait %+v)", started, tt.wantStart, p.Status.LockWait)
			}
			if !slices.Equal(acquired(p), tt.wantAcquire) {
				t.Fatalf("acquired %v, want %v", acquired(p), tt.wantAcquire)
			}
			for _, u := range p.Locks.Acquire {
				if len(u.Holders) > u.Lock.CapacityOrDefault() {
					t.Fatalf("holders of %s: %d over capacity %d", u.Lock.LockKey(), len(u.Holders), u.Lock.CapacityOrDefault())
				}
				mine := slices.IndexFunc(u.Holders, func(h v1alpha1.LockHolder) bool { return locks.HolderOf(h, u.Lock, g) })
				if mine < 0 || u.Holders[mine].Pod != p.Create.Name {
					t.Fatalf("holders of %s: %+v, want the new run's pod", u.Lock.LockKey(), u.Holders)
				}
				wantNS := ""
				if u.Lock.GetNamespace() == "" {
					wantNS = "ns"
				}
				if u.Holders[mine].Namespace != wantNS {
					t.Fatalf("holder of %s has namespace %q, want %q", u.Lock.LockKey(), u.Holders[mine].Namespace, wantNS)
				}
				if slices.Contains(u.Holders, sameNameElsewhere) != slices.Contains(u.Lock.LockHolders(), sameNameElsewhere) {
					t.Fatalf("holders of %s: %+v, the other namespace's group lost or gained its slot", u.Lock.LockKey(), u.Holders)
				}
			}
			var waitFor []string
			if p.Status.LockWait != nil {
				waitFor = p.Status.LockWait.Locks
			}
			if !slices.Equal(waitFor, tt.wantWaitFor) {
				t.Fatalf("waits for %v, want %v", waitFor, tt.wantWaitFor)
			}
			if len(tt.wantWaitFor) > 0 && planItem(t, p, "a").WaitReason != v1alpha1.WaitLockHeld {
				t.Fatalf("item a waits for %q, want %s", planItem(t, p, "a").WaitReason, v1alpha1.WaitLockHeld)
			}
		})
	}
}

func TestStaleClusterLockSlotReleasedOtherNamespaceKept(t *testing.T) {
	g := newGroup("a")
	g.Spec.ClusterLocks = []string{"db"}
	g.Spec.Suspend = true
	ended := holderIn("ns", "backups")
	ended.GroupUID = "backups-uid"
	sameNameElsewhere := holderIn("other-ns", "backups")
	p := Decide(mixedInput(g, 0, []v1alpha1.Lock{builders.ClusterLock("db", 2, ended, sameNameElsewhere)}, selected, nil))
	if !slices.Equal(released(p), []string{"ClusterOaatLock/db"}) {
		t.Fatalf("released %v, want the cluster lock", released(p))
	}
	if h := p.Locks.Release[0].Holders; !slices.Equal(h, []v1alpha1.LockHolder{sameNameElsewhere}) {
		t.Fatalf("holders after the release: %+v, want only the other namespace's", h)
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

// TestNewClusterLockWaitsForItsAdoption: an installation of some namespaces takes no slot of a
// ClusterOaatLock created less than its adoption window ago; the group waits for it and is looked
// at again when the window ends, not a lockRecheck later, and then starts.
func TestNewClusterLockWaitsForItsAdoption(t *testing.T) {
	g := newGroup("a")
	g.Spec.ClusterLocks = []string{"db"}
	lock := builders.ClusterLock("db", 1)
	lock.CreationTimestamp = *at(-10 * time.Second)
	in := mixedInput(g, 0, []v1alpha1.Lock{lock}, selected, nil)
	in.Locks.Installation, in.Locks.AdoptionWindow = "ns", locks.DefaultAdoptionWindow
	p := Decide(in)
	if p.Create != nil || p.Status.LockWait == nil || !slices.Equal(p.Status.LockWait.Locks, []string{"ClusterOaatLock/db"}) {
		t.Fatalf("create %v, lockWait %+v: want a wait for ClusterOaatLock/db", p.Create, p.Status.LockWait)
	}
	if want := locks.DefaultAdoptionWindow - 10*time.Second; p.RequeueAfter != want {
		t.Fatalf("requeueAfter %v, want %v", p.RequeueAfter, want)
	}

	in = mixedInput(applied(g, p), locks.DefaultAdoptionWindow-10*time.Second, []v1alpha1.Lock{lock}, selected, nil)
	in.Locks.Installation, in.Locks.AdoptionWindow = "ns", locks.DefaultAdoptionWindow
	if p := Decide(in); p.Create == nil || !slices.Equal(acquired(p), []string{"ClusterOaatLock/db"}) {
		t.Fatalf("create %v, acquired %v once the window has passed", p.Create, acquired(p))
	}
}
