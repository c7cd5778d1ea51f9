package statusview

import (
	"bytes"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestWriteLocks(t *testing.T) {
	now := builders.T0
	ago := func(d time.Duration) *metav1.Time { return builders.At(-d) }
	holder := func(namespace, pod string, since time.Duration) v1alpha1.LockHolder {
		h := builders.Holder("photos", pod, ago(since))
		h.Namespace, h.Item = namespace, "/srv/photos"
		return h
	}
	bucket := builders.Lock("bucket", 2)
	bucket.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	bucket.Status.CircuitBreaker = &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/photos",
		OpenedAt: ago(3 * time.Minute), NextProbeAt: ago(-time.Minute), FailedProbes: 1}
	shared := builders.ClusterLock("shared", 0, holder("other", "photos-y-1", 2*time.Minute))
	shared.Status.WaitingGroups = 3
	locks := []v1alpha1.Lock{builders.Lock("nas", 0, holder("", "photos-x-3", 5*time.Minute)), builders.Lock("db", 2), bucket, shared}
	waiting := func(name string, since time.Duration, locks ...string) v1alpha1.OaatGroup {
		return *builders.Group().Named(name).Locks(locks...).WaitingForLocks(ago(since)).Obj()
	}
	groups := []v1alpha1.OaatGroup{
		waiting("music", time.Minute, "nas"),
		waiting("videos", 3*time.Minute, "nas", "db"),
		*builders.Group().Named("idle").Locks("nas").Obj(),
		*builders.Group().Named("backups").ClusterLocks("shared").WaitingForLocks(ago(4*time.Minute), "ClusterOaatLock/shared").Obj(),
	}
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
	g := builders.Group().Condition(ready).WaitingForLocks(builders.At(0), "db", "nas").Obj()
	if got, want := Summary(g), `ready=True  waiting for OaatLock db, nas  running=none`; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
	g.Status.LockWait.Locks = []string{"ClusterOaatLock/shared", "nas"}
	if got, want := Summary(g), `ready=True  waiting for OaatLock nas and ClusterOaatLock shared  running=none`; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
	g.Spec.Priority, g.Status.LockWait.Priority = ptr.To[int32](9), 5
	if got, want := Summary(g), `ready=True  waiting for OaatLock nas and ClusterOaatLock shared (priority 5 of the 9 asked: the locks' spec.maxPriority)  running=none`; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
	g.Status.LockWait.Priority = 9
	if got, want := Summary(g), `ready=True  waiting for OaatLock nas and ClusterOaatLock shared (priority 9)  running=none`; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
	g.Status.LockWait.PromotedAt = builders.At(0)
	if got, want := Summary(g), `ready=True  waiting for OaatLock nas and ClusterOaatLock shared (promoted: passed over 3 times)  running=none`; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
}

// TestWriteLocksScheduled proves the capacity in force of a lock with a capacity schedule (a
// window of 0 slots from 11:00 to 13:00 at noon) in its row, and its line: the schedule's capacity,
// the next change and the slots held above it, which drain.
func TestWriteLocksScheduled(t *testing.T) {
	slotted := builders.Holder("photos", "photos-x-3", builders.At(-5*time.Minute))
	slotted.Slots = 2
	night := builders.Lock("nas", 1, slotted)
	night.Spec.CapacitySchedule = []v1alpha1.CapacityWindow{{Start: "11:00", End: "13:00", Capacity: ptr.To[int32](0)}}
	var out bytes.Buffer
	if err := WriteLocks(&out, []v1alpha1.Lock{night}, nil, builders.T0); err != nil {
		t.Fatal(err)
	}
	want := `LOCK  CAPACITY  HOLDERS  WAITING
nas   0         1        0

nas: capacity 0 by spec.capacitySchedule (spec.capacity 1), 1 from 2026-11-21T13:00:00Z (in 60m), 2 slot(s) held above it, draining; held by photos (item x, pod photos-x-3, for 5m, 2 slots)
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestWriteLocksAdaptive proves that a lock with spec.adaptive shows the capacity it grants, its
// bounds and its last change.
func TestWriteLocksAdaptive(t *testing.T) {
	l := builders.Lock("nas", 8)
	l.Spec.Adaptive = &v1alpha1.AdaptiveCapacity{Min: 1, Max: 6}
	l.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: 2, CapacityInUse: 2, FastSuccesses: 3, LastChange: &v1alpha1.AdaptiveChange{
		At: *builders.At(-10 * time.Minute), From: 4, To: 2, Reason: v1alpha1.AdaptiveCountedFailure, Message: "the run of item \"x\" of group photos (pod p) failed"}}
	var out bytes.Buffer
	if err := WriteLocks(&out, []v1alpha1.Lock{l}, nil, builders.T0); err != nil {
		t.Fatal(err)
	}
	want := `LOCK  CAPACITY  HOLDERS  WAITING
nas   8         0        0

nas: adaptive capacity 2 in use (2 of 1 to 6, 3 fast successes), changed 10m ago from 4 to 2 (CountedFailure: the run of item "x" of group photos (pod p) failed)
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestWriteLocksPriority proves that the waiting groups show in the order of the lock's queue,
// with the priority the lock honours, a promotion and how often the lock passed a request over.
func TestWriteLocksPriority(t *testing.T) {
	now := builders.T0
	ago := func(d time.Duration) *metav1.Time { return builders.At(-d) }
	nas := builders.Lock("nas", 1)
	nas.Spec.MaxPriority = ptr.To[int32](5)
	nas.Status.PassedOver = []v1alpha1.PassedOver{{Group: "music", Since: *ago(time.Hour), Count: 2}}
	waiting := func(name string, since time.Duration, priority int32, promoted bool) v1alpha1.OaatGroup {
		g := builders.Group().Named(name).Locks("nas").WaitingForLocks(ago(since)).Obj()
		g.Status.LockWait.Priority = priority
		if promoted {
			g.Status.LockWait.PromotedAt = ago(time.Second)
		}
		return *g
	}
	groups := []v1alpha1.OaatGroup{waiting("music", time.Hour, 0, false), waiting("prune", time.Minute, 9, false),
		waiting("videos", 2*time.Minute, 3, false), waiting("photos", 3*time.Minute, 0, true)}
	var out bytes.Buffer
	if err := WriteLocks(&out, []v1alpha1.Lock{nas}, groups, now); err != nil {
		t.Fatal(err)
	}
	want := `LOCK  CAPACITY  HOLDERS  WAITING
nas   1         0        4

nas: waiting: photos (3m, promoted), prune (60s, priority 5), videos (2m, priority 3), music (60m, passed over 2 of 3)
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
