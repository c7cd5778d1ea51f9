package statusview

import (
	"bytes"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestWriteLocks(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	locks := []v1alpha1.Lock{
		&v1alpha1.OaatLock{
			ObjectMeta: metav1.ObjectMeta{Name: "nas", Namespace: "ns"},
			Status: v1alpha1.OaatLockStatus{Holders: []v1alpha1.LockHolder{
				{Group: "photos", Item: "/srv/photos", Pod: "photos-x-3", Since: ago(5 * time.Minute)},
			}},
		},
		&v1alpha1.OaatLock{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}, Spec: v1alpha1.OaatLockSpec{Capacity: 2}},
		&v1alpha1.OaatLock{
			ObjectMeta: metav1.ObjectMeta{Name: "bucket", Namespace: "ns"},
			Spec:       v1alpha1.OaatLockSpec{Capacity: 2, CircuitBreaker: v1alpha1.LockBreakerShared},
			Status: v1alpha1.OaatLockStatus{CircuitBreaker: &v1alpha1.LockCircuitBreakerStatus{
				State: v1alpha1.BreakerOpen, OpenedBy: "ns/photos", OpenedAt: &[]metav1.Time{ago(3 * time.Minute)}[0],
				NextProbeAt: &[]metav1.Time{ago(-time.Minute)}[0], FailedProbes: 1,
			}},
		},
		&v1alpha1.ClusterOaatLock{
			ObjectMeta: metav1.ObjectMeta{Name: "shared"},
			Status: v1alpha1.ClusterOaatLockStatus{WaitingGroups: 3, Holders: []v1alpha1.LockHolder{
				{Namespace: "other", Group: "photos", Item: "/srv/photos", Pod: "photos-y-1", Since: ago(2 * time.Minute)},
			}},
		},
	}
	waiting := func(name string, since time.Duration, locks ...string) v1alpha1.OaatGroup {
		g := v1alpha1.OaatGroup{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.OaatGroupSpec{Locks: locks}}
		g.Status.LockWait = &v1alpha1.LockWait{Since: ago(since), Locks: locks}
		return g
	}
	groups := []v1alpha1.OaatGroup{
		waiting("music", time.Minute, "nas"),
		waiting("videos", 3*time.Minute, "nas", "db"),
		{ObjectMeta: metav1.ObjectMeta{Name: "idle"}, Spec: v1alpha1.OaatGroupSpec{Locks: []string{"nas"}}},
	}
	backups := v1alpha1.OaatGroup{ObjectMeta: metav1.ObjectMeta{Name: "backups"}, Spec: v1alpha1.OaatGroupSpec{ClusterLocks: []string{"shared"}}}
	backups.Status.LockWait = &v1alpha1.LockWait{Since: ago(4 * time.Minute), Locks: []string{"ClusterOaatLock/shared"}}
	groups = append(groups, backups)
	var out bytes.Buffer
	if err := WriteLocks(&out, locks, groups, now); err != nil {
		t.Fatal(err)
	}
	want := `LOCK                    CAPACITY  HOLDERS  WAITING
nas                     1         1        2
db                      2         0        1
bucket                  2         0        0
ClusterOaatLock/shared  1         1        3

nas: held by photos (item /srv/photos, pod photos-x-3, for 5m); waiting: videos (3m), music (60s)
db: waiting: videos (3m)
bucket: circuit breaker OPEN, opened by ns/photos 3m ago, failed probes: 1, next probe in 60s
ClusterOaatLock/shared: held by other/photos (item /srv/photos, pod photos-y-1, for 2m); waiting: backups (4m)
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestSummaryWaitingForLocks(t *testing.T) {
	g := &v1alpha1.OaatGroup{Status: v1alpha1.OaatGroupStatus{
		Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady}},
		LockWait:   &v1alpha1.LockWait{Locks: []string{"db", "nas"}},
	}}
	if got, want := Summary(g), `ready=True  waiting for OaatLock db, nas  running=none`; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
	g.Status.LockWait.Locks = []string{"ClusterOaatLock/shared", "nas"}
	if got, want := Summary(g), `ready=True  waiting for OaatLock nas and ClusterOaatLock shared  running=none`; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
}
