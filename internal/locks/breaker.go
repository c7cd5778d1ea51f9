package locks

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// A lock that carries the circuit breaker (spec.circuitBreaker: Shared) shares it among the groups
// naming it. Each group keeps its own status.circuitBreaker and follows the lock's (the planner's
// followLockBreakers); the lock's review alone writes the lock's, from the groups' breakers,
// compared by their times so that a review that decides again from the same statuses decides the
// same. For each group naming the lock, in the order of their namespace and name:
//
//	group Open,   lock not Open, closed before the group opened  -> the lock opens (event BreakerOpened on the lock)
//	group Open,   lock closed since the group opened             -> nothing: the group closes, another group's probe succeeded
//	group Open,   lock Open                                      -> the lock takes the later nextProbeAt and the higher failedProbes
//	group Closed, lock Open, group closed before it opened        -> nothing: the group opens too and holds
//	group Closed, lock Open, group closed since it opened         -> the lock closes (event BreakerClosed on the lock)
//
// While it is open the lock gives one slot at a time (Slots), so that the probes of all the groups
// run one at a time.

// BreakerOpen reports whether the lock carries the groups' circuit breaker
// (spec.circuitBreaker: Shared) and it is open.
func BreakerOpen(lock v1alpha1.Lock) bool {
	return lock.CarriesBreaker() && isOpen(lock.LockBreaker())
}

// isOpen reports whether a lock's breaker is open.
func isOpen(cb *v1alpha1.LockCircuitBreakerStatus) bool {
	return cb != nil && cb.State == v1alpha1.BreakerOpen
}

// Slots is how many runs the lock lets hold it at once with the breaker cb and the capacity in
// force (CapacityAt), but at most one while the breaker it carries is open, so that one probe at a
// time runs for all the groups naming it.
func Slots(lock v1alpha1.Lock, cb *v1alpha1.LockCircuitBreakerStatus, capacity int) int {
	if probing(lock, cb) {
		return min(capacity, 1)
	}
	return capacity
}

// probing reports whether the lock carries the groups' breaker and cb, its breaker, is open: one
// probe at a time runs, taking one slot.
func probing(lock v1alpha1.Lock, cb *v1alpha1.LockCircuitBreakerStatus) bool {
	return lock.CarriesBreaker() && isOpen(cb)
}

// BreakerChanged reports whether the breaker the lock carries changed between two versions of
// it: every group naming the lock follows it.
func BreakerChanged(before, after v1alpha1.Lock) bool {
	return before.CarriesBreaker() != after.CarriesBreaker() ||
		!equality.Semantic.DeepEqual(before.LockBreaker(), after.LockBreaker())
}

// leadBreaker decides the breaker the lock carries from the breakers of the groups naming it (the
// table above), and reports its opening and closing on the lock.
func (r *Review) leadBreaker(in ReviewInput) {
	if !in.Lock.CarriesBreaker() {
		return
	}
	members := slices.Clone(in.Members)
	slices.SortFunc(members, func(a, b Member) int {
		return Place{Namespace: a.Namespace, Group: a.Name}.Compare(Place{Namespace: b.Namespace, Group: b.Name})
	})
	for i := range members {
		m := &members[i]
		cb, lb := m.Breaker, r.Breaker
		if !m.Names || cb == nil {
			continue
		}
		switch {
		case cb.State == v1alpha1.BreakerOpen && isOpen(lb):
			r.Breaker = shareProbes(lb, cb)
		case cb.State == v1alpha1.BreakerOpen && lb != nil && lb.ClosedAt != nil && !lb.ClosedAt.Before(cb.OpenedAt):
		case cb.State == v1alpha1.BreakerOpen:
			r.Breaker = &v1alpha1.LockCircuitBreakerStatus{
				State: v1alpha1.BreakerOpen, OpenedBy: groupRef(m), OpenedAt: cb.OpenedAt, NextProbeAt: cb.NextProbeAt,
				FailedProbes: cb.FailedProbes, LastFailureReason: cb.LastFailureReason, LastFailureExitCode: cb.LastFailureExitCode,
			}
			r.Events = append(r.Events, Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonBreakerOpened, Message: fmt.Sprintf(
				"The circuit breaker of group %s opened (%d items failed in a row, the last with %s): every group naming the lock holds; one probe at a time runs for all of them, the first at %s",
				groupRef(m), len(cb.FailedItems), FailureText(cb), stampText(cb.NextProbeAt))})
		case isOpen(lb) && cb.ClosedAt != nil && !cb.ClosedAt.Before(lb.OpenedAt):
			r.Breaker = &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerClosed, ClosedAt: cb.ClosedAt, ClosedBy: groupRef(m)}
			r.Events = append(r.Events, Event{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonBreakerClosed, Message: fmt.Sprintf(
				"The circuit breaker, open since %s, closes (failed probes: %d): the breaker of group %s closed; every group naming the lock goes on",
				stampText(lb.OpenedAt), lb.FailedProbes, groupRef(m))})
		}
	}
}

// shareProbes is the lock's open breaker with the later nextProbeAt and the higher failedProbes of
// its own and the group's, with the failure of whichever is later.
func shareProbes(lb *v1alpha1.LockCircuitBreakerStatus, cb *v1alpha1.CircuitBreakerStatus) *v1alpha1.LockCircuitBreakerStatus {
	shared := lb.DeepCopy()
	if timeOf(cb.NextProbeAt).After(timeOf(lb.NextProbeAt)) {
		shared.NextProbeAt, shared.LastFailureReason, shared.LastFailureExitCode = cb.NextProbeAt, cb.LastFailureReason, cb.LastFailureExitCode
	}
	shared.FailedProbes = max(cb.FailedProbes, lb.FailedProbes)
	return shared
}

// groupRef is the group as a lock's breaker names it: namespace/name.
func groupRef(m *Member) string { return m.Namespace + "/" + m.Name }

// FailureText is the last failure of a group's breaker for a message: its reason, and its exit
// code when there is one.
func FailureText(cb *v1alpha1.CircuitBreakerStatus) string {
	if cb.LastFailureExitCode == nil {
		return cb.LastFailureReason
	}
	return fmt.Sprintf("%s, exit code %d", cb.LastFailureReason, *cb.LastFailureExitCode)
}

// stampText is a time of a breaker's status for a message; "an unknown time" when absent (a
// lock's status written by hand).
func stampText(t *metav1.Time) string {
	if t == nil {
		return "an unknown time"
	}
	return t.UTC().Format(time.RFC3339)
}

// timeOf is the time of a breaker's timestamp, zero when absent.
func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}
