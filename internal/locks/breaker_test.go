package locks

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// carrying is the OaatLock nas of capacity 3 that carries the breaker, in the state given (none
// when empty), with the holders.
func carrying(state v1alpha1.BreakerState, holders ...v1alpha1.LockHolder) *v1alpha1.OaatLock {
	l := lock("nas", 3, holders...)
	l.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	if state != "" {
		l.Status.CircuitBreaker = &v1alpha1.LockCircuitBreakerStatus{State: state}
	}
	return l
}

// TestBreakerSlots proves that a lock whose carried breaker is open gives one slot, whatever its
// capacity, so that the groups naming it probe one at a time; closed, absent or not carried, its
// capacity.
func TestBreakerSlots(t *testing.T) {
	notCarried := carrying(v1alpha1.BreakerOpen)
	notCarried.Spec.CircuitBreaker = v1alpha1.LockBreakerNone
	clusterOpen := clusterLock("shared", 5)
	clusterOpen.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	clusterOpen.Status.CircuitBreaker = &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen}
	for _, tc := range []struct {
		name  string
		lock  v1alpha1.Lock
		open  bool
		slots int
		// capacity is the capacity in force, spec.capacity when nil.
		capacity *int
	}{
		{name: "open", lock: carrying(v1alpha1.BreakerOpen), open: true, slots: 1},
		{name: "closed", lock: carrying(v1alpha1.BreakerClosed), slots: 3},
		{name: "never opened", lock: carrying(""), slots: 3},
		{name: "open but no longer carried", lock: notCarried, slots: 3},
		{name: "a ClusterOaatLock, open", lock: clusterOpen, open: true, slots: 1},
		{name: "open, in a window of capacity 0", lock: carrying(v1alpha1.BreakerOpen), capacity: ptr.To(0), open: true, slots: 0},
		{name: "closed, in a window of capacity 5", lock: carrying(v1alpha1.BreakerClosed), capacity: ptr.To(5), slots: 5},
	} {
		capacity := tc.lock.CapacityOrDefault()
		if tc.capacity != nil {
			capacity = *tc.capacity
		}
		if open, slots := BreakerOpen(tc.lock), Slots(tc.lock, tc.lock.LockBreaker(), capacity); open != tc.open || slots != tc.slots {
			t.Errorf("%s: BreakerOpen %v, Slots %d; want %v, %d", tc.name, open, slots, tc.open, tc.slots)
		}
	}
}

// TestBreakerChanged proves that any change of the carried breaker, or of whether the lock
// carries it, concerns every group naming the lock; a change of holders alone does not.
func TestBreakerChanged(t *testing.T) {
	opened := carrying(v1alpha1.BreakerOpen)
	pushed := opened.DeepCopy()
	pushed.Status.CircuitBreaker.NextProbeAt = &metav1.Time{Time: t0}
	held := opened.DeepCopy()
	held.Status.Holders = []v1alpha1.LockHolder{holder("b", "b-x-1")}
	dropped := opened.DeepCopy()
	dropped.Spec.CircuitBreaker = v1alpha1.LockBreakerNone
	for _, tc := range []struct {
		name          string
		before, after v1alpha1.Lock
		want          bool
	}{
		{name: "opened", before: carrying(""), after: opened, want: true},
		{name: "closed", before: opened, after: carrying(v1alpha1.BreakerClosed), want: true},
		{name: "next probe pushed", before: opened, after: pushed, want: true},
		{name: "no longer carried", before: opened, after: dropped, want: true},
		{name: "a holder added", before: opened, after: held, want: false},
	} {
		if got := BreakerChanged(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: BreakerChanged %v, want %v", tc.name, got, tc.want)
		}
	}
}

// code is a pointer to an exit code.
func code(c int32) *int32 { return &c }

// groupOpen is a group's breaker opened at opened (from t0) by three items failing, the last with
// Error and exit code 2, its next probe at next, after failed probes.
func groupOpen(opened, next time.Duration, failed int32) *v1alpha1.CircuitBreakerStatus {
	return &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen, FailedItems: []string{"i1", "i2", "i3"}, OpenedAt: at(opened),
		NextProbeAt: at(next), FailedProbes: failed, LastFailureReason: "Error", LastFailureExitCode: code(2)}
}

// groupClosed is a group's closed breaker, last closed at closed (from t0), never closed when nil.
func groupClosed(closed *time.Duration) *v1alpha1.CircuitBreakerStatus {
	cb := &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed}
	if closed != nil {
		cb.ClosedAt = at(*closed)
	}
	return cb
}

// lockOpen is a lock's breaker opened by ns/other at opened (from t0), its next probe at next after
// failed probes, the last failure reason as given with exit code 75.
func lockOpen(opened, next time.Duration, failed int32, reason string) *v1alpha1.LockCircuitBreakerStatus {
	return &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/other", OpenedAt: at(opened),
		NextProbeAt: at(next), FailedProbes: failed, LastFailureReason: reason, LastFailureExitCode: code(75)}
}

// lockClosed is a lock's breaker closed by ns/other at closed (from t0).
func lockClosed(closed time.Duration) *v1alpha1.LockCircuitBreakerStatus {
	return &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerClosed, ClosedAt: at(closed), ClosedBy: "ns/other"}
}

// breakerLock is the OaatLock nas of capacity 3 carrying the breaker (or not), with the status
// given.
func breakerLock(carried bool, cb *v1alpha1.LockCircuitBreakerStatus) *v1alpha1.OaatLock {
	l := lock("nas", 3)
	if carried {
		l.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	}
	l.Status.CircuitBreaker = cb
	return l
}

// openedByA is the event of group ns/a's breaker (groupOpen(-5m, +5m, 0)) opening the lock's.
var openedByA = Event{Type: "Warning", Reason: v1alpha1.ReasonBreakerOpened,
	Message: "The circuit breaker of group ns/a opened (3 items failed in a row, the last with Error, exit code 2): every group naming the lock holds; one probe at a time runs for all of them, the first at 2026-11-21T12:05:00Z"}

// TestDecideLeadsBreaker proves the five rows of leadBreaker's table, one case (or two, at a
// boundary) each, by the whole review: the lock's new breaker and its events. Then: a lock that
// carries no breaker gets none whatever its status and its groups say; a group that no longer
// names the lock leads nothing; the groups are read in the order of their namespace and name.
func TestDecideLeadsBreaker(t *testing.T) {
	openedByAStatus := &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/a", OpenedAt: at(-5 * time.Minute),
		NextProbeAt: at(5 * time.Minute), LastFailureReason: "Error", LastFailureExitCode: code(2)}
	tests := []struct {
		name    string
		lock    *v1alpha1.OaatLock
		members []Member
		want    Review
	}{
		{name: "row 1: group Open, lock closed before the group opened: the lock opens",
			lock:    breakerLock(true, lockClosed(-time.Hour)),
			members: members(grp("a").withBreaker(groupOpen(-5*time.Minute, 5*time.Minute, 0))),
			want:    Review{Breaker: openedByAStatus, Events: []Event{openedByA}}},
		{name: "row 1: group Open, lock never opened: the lock opens",
			lock:    breakerLock(true, nil),
			members: members(grp("a").withBreaker(groupOpen(-5*time.Minute, 5*time.Minute, 0))),
			want:    Review{Breaker: openedByAStatus, Events: []Event{openedByA}}},
		{name: "row 2: group Open, lock closed since the group opened: nothing",
			lock:    breakerLock(true, lockClosed(-time.Minute)),
			members: members(grp("a").withBreaker(groupOpen(-5*time.Minute, 5*time.Minute, 0))),
			want:    Review{Breaker: lockClosed(-time.Minute)}},
		{name: "row 2: lock closed at the instant the group opened: nothing",
			lock:    breakerLock(true, lockClosed(-5*time.Minute)),
			members: members(grp("a").withBreaker(groupOpen(-5*time.Minute, 5*time.Minute, 0))),
			want:    Review{Breaker: lockClosed(-5 * time.Minute)}},
		{name: "row 3: both Open, the group's probe later: its nextProbeAt and failure, the higher failedProbes",
			lock:    breakerLock(true, lockOpen(-10*time.Minute, time.Minute, 1, "Old")),
			members: members(grp("a").withBreaker(groupOpen(-10*time.Minute, 5*time.Minute, 3))),
			want: Review{Breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/other", OpenedAt: at(-10 * time.Minute),
				NextProbeAt: at(5 * time.Minute), FailedProbes: 3, LastFailureReason: "Error", LastFailureExitCode: code(2)}}},
		{name: "row 3: both Open, the lock's probe later: its own, and its higher failedProbes",
			lock:    breakerLock(true, lockOpen(-10*time.Minute, 5*time.Minute, 4, "Old")),
			members: members(grp("a").withBreaker(groupOpen(-10*time.Minute, time.Minute, 3))),
			want:    Review{Breaker: lockOpen(-10*time.Minute, 5*time.Minute, 4, "Old")}},
		{name: "row 4: group Closed before the lock opened: nothing",
			lock:    breakerLock(true, lockOpen(-10*time.Minute, time.Minute, 1, "Old")),
			members: members(grp("a").withBreaker(groupClosed(after(-time.Hour)))),
			want:    Review{Breaker: lockOpen(-10*time.Minute, time.Minute, 1, "Old")}},
		{name: "row 4: group Closed, never opened: nothing",
			lock:    breakerLock(true, lockOpen(-10*time.Minute, time.Minute, 1, "Old")),
			members: members(grp("a").withBreaker(groupClosed(nil))),
			want:    Review{Breaker: lockOpen(-10*time.Minute, time.Minute, 1, "Old")}},
		{name: "row 5: group closed since the lock opened: the lock closes",
			lock:    breakerLock(true, lockOpen(-10*time.Minute, time.Minute, 2, "Old")),
			members: members(grp("a").withBreaker(groupClosed(after(-time.Minute)))),
			want: Review{Breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerClosed, ClosedAt: at(-time.Minute), ClosedBy: "ns/a"},
				Events: []Event{{Type: "Normal", Reason: v1alpha1.ReasonBreakerClosed,
					Message: "The circuit breaker, open since 2026-11-21T11:50:00Z, closes (failed probes: 2): the breaker of group ns/a closed; every group naming the lock goes on"}}}},
		{name: "not carried: no breaker, though the status has one and a group is open",
			lock:    breakerLock(false, lockOpen(-10*time.Minute, time.Minute, 2, "Old")),
			members: members(grp("a").withBreaker(groupOpen(-5*time.Minute, 5*time.Minute, 0))),
			want:    Review{}},
		{name: "a group that no longer names the lock leads nothing",
			lock:    breakerLock(true, lockClosed(-time.Hour)),
			members: members(grp("a").notNaming().withBreaker(groupOpen(-5*time.Minute, 5*time.Minute, 0))),
			want:    Review{Breaker: lockClosed(-time.Hour)}},
		{name: "groups read by namespace and name: a opens the lock, b shares its later probe",
			lock: breakerLock(true, lockClosed(-time.Hour)),
			members: members(
				grp("b").withBreaker(&v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedAt: at(-3 * time.Minute),
					NextProbeAt: at(7 * time.Minute), LastFailureReason: "OOMKilled"}),
				grp("a").withBreaker(groupOpen(-5*time.Minute, 5*time.Minute, 0))),
			want: Review{Breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/a", OpenedAt: at(-5 * time.Minute),
				NextProbeAt: at(7 * time.Minute), LastFailureReason: "OOMKilled"}, Events: []Event{openedByA}}},
		{name: "one group closes the lock, another opened before that close follows it",
			lock: breakerLock(true, lockOpen(-10*time.Minute, time.Minute, 2, "Old")),
			members: members(
				grp("b").withBreaker(groupOpen(-10*time.Minute, time.Minute, 2)),
				grp("a").withBreaker(groupClosed(after(-time.Minute)))),
			want: Review{Breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerClosed, ClosedAt: at(-time.Minute), ClosedBy: "ns/a"},
				Events: []Event{{Type: "Normal", Reason: v1alpha1.ReasonBreakerClosed,
					Message: "The circuit breaker, open since 2026-11-21T11:50:00Z, closes (failed probes: 2): the breaker of group ns/a closed; every group naming the lock goes on"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.lock.DeepCopy()
			got := Decide(reviewOf(tt.lock, tt.members))
			if d := diff(withCapacity(tt.want, tt.lock), got); d != "" {
				t.Errorf("Decide (-want +got):\n%s", d)
			}
			if d := diff(before, tt.lock); d != "" {
				t.Errorf("Decide changed the lock it read (-before +after):\n%s", d)
			}
		})
	}
}

// TestTakeWithBreakerOpen proves that while the breaker a lock carries is open, the lock grants
// one slot at a time whatever its capacity (3): one waiter of two when it is free, none when a
// run holds it; its capacity when closed or not carried; and one when the breaker opens in the
// same review.
func TestTakeWithBreakerOpen(t *testing.T) {
	waiters := []mb{grp("b").requesting(-time.Minute, "b-1"), grp("c").requesting(0, "c-1")}
	running := grp("h").running("h-1")
	opening := grp("a").withBreaker(groupOpen(-5*time.Minute, 5*time.Minute, 0))
	tests := []struct {
		name    string
		lock    *v1alpha1.OaatLock
		members []Member
		breaker *v1alpha1.LockCircuitBreakerStatus
		events  []Event
		holders []v1alpha1.LockHolder
		granted []v1alpha1.LockHolder
	}{
		{name: "open, free: one", lock: carrying(v1alpha1.BreakerOpen), members: members(waiters...),
			breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen}, holders: holders(holder("b", "b-1")), granted: holders(holder("b", "b-1"))},
		{name: "open, held by a run: none", lock: carrying(v1alpha1.BreakerOpen, holder("h", "h-1")), members: members(append(waiters, running)...),
			breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen}, holders: holders(holder("h", "h-1"))},
		{name: "closed, held by a run: the two others", lock: carrying(v1alpha1.BreakerClosed, holder("h", "h-1")), members: members(append(waiters, running)...),
			breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerClosed},
			holders: holders(holder("b", "b-1"), holder("c", "c-1"), holder("h", "h-1")), granted: holders(holder("b", "b-1"), holder("c", "c-1"))},
		{name: "open but not carried: its capacity", lock: breakerLock(false, &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen}),
			members: members(waiters...), holders: holders(holder("b", "b-1"), holder("c", "c-1")), granted: holders(holder("b", "b-1"), holder("c", "c-1"))},
		{name: "opens in this review: one", lock: breakerLock(true, nil), members: members(append(waiters, opening)...),
			breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/a", OpenedAt: at(-5 * time.Minute),
				NextProbeAt: at(5 * time.Minute), LastFailureReason: "Error", LastFailureExitCode: code(2)},
			events: []Event{openedByA}, holders: holders(holder("b", "b-1")), granted: holders(holder("b", "b-1"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := Review{Holders: tt.holders, Breaker: tt.breaker, WaitingGroups: 2, Granted: tt.granted, Events: tt.events}
			if d := diff(withCapacity(want, tt.lock), Decide(reviewOf(tt.lock, tt.members))); d != "" {
				t.Errorf("Decide (-want +got):\n%s", d)
			}
		})
	}
}
