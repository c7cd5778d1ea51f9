package planner

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// A lock that carries the circuit breaker (spec.circuitBreaker: Shared) shares it among the groups
// naming it. Each group keeps its own status.circuitBreaker and follows the lock's
// (status.circuitBreaker of the lock), which the groups write, compared by their times so that a
// pass that decides again from the same statuses decides the same:
//
//	group Open,   lock not Open, closed before the group opened  -> the lock opens (event BreakerOpened on the lock)
//	group Open,   lock closed since the group opened             -> the group closes: another group's probe succeeded
//	group Open,   lock Open                                      -> the later nextProbeAt and the higher failedProbes win, both ways
//	group Closed, lock Open, group closed before it opened        -> the group opens too and holds
//	group Closed, lock Open, group closed since it opened         -> the lock closes (event BreakerClosed on the lock)
//
// The group that opens the lock's breaker, and the one that closes it, report their own as usual;
// the lock reports its own opening and closing, and the groups that follow it send no event.
// While it is open the lock gives one slot at a time (locks.Slots), so that the probes of all the
// groups run one at a time.

// LockBreakerUpdate is a new state of the breaker a lock carries.
type LockBreakerUpdate struct {
	// Lock is the lock as read; its breaker is written only if unchanged since.
	Lock v1alpha1.Lock
	// Breaker is its new status.circuitBreaker.
	Breaker *v1alpha1.LockCircuitBreakerStatus
	// Event reports the breaker's opening or closing, on the lock; nil for a failed probe.
	Event *Event
}

// breakerLocks are the locks the group names that exist and carry the breaker, by key.
func (d *decision) breakerLocks() []v1alpha1.Lock {
	var carriers []v1alpha1.Lock
	for _, key := range slices.Sorted(slices.Values(d.group.Spec.LockKeys())) {
		if lock := d.in.Locks.Locks[key]; lock != nil && lock.CarriesBreaker() {
			carriers = append(carriers, lock)
		}
	}
	return carriers
}

// carriedBreakerPolicy gives a group without spec.circuitBreaker that names a lock carrying one
// the breaker's defaults, so that it holds with the others.
func (d *decision) carriedBreakerPolicy() {
	if d.policy.breaker != nil || d.group.Spec.CircuitBreaker != nil || len(d.breakerLocks()) == 0 {
		return
	}
	d.policy.breaker, _ = readBreakerPolicy(&v1alpha1.CircuitBreaker{})
}

// syncLockBreakers follows, and updates, the breakers that the group's locks carry, once
// recordCurrentRun and reconcileBreaker have brought the group's own breaker up to date.
func (d *decision) syncLockBreakers() {
	cb := d.breaker()
	if cb == nil {
		return
	}
	for _, lock := range d.breakerLocks() {
		lb := lock.LockBreaker()
		lockOpen := locks.BreakerOpen(lock)
		switch {
		case cb.State == v1alpha1.BreakerOpen && lockOpen:
			d.shareProbes(lock, cb, lb)
		case cb.State == v1alpha1.BreakerOpen && lb != nil && lb.ClosedAt != nil && !lb.ClosedAt.Before(cb.OpenedAt):
			d.markClosed(cb)
		case cb.State == v1alpha1.BreakerOpen:
			d.openLockBreaker(lock, cb)
		case lockOpen && (cb.ClosedAt == nil || cb.ClosedAt.Before(lb.OpenedAt)):
			d.followLockBreaker(cb, lb)
		case lockOpen:
			d.closeLockBreaker(lock, lb, cb)
		}
	}
}

// groupRef is the group as a lock's breaker names it: namespace/name.
func (d *decision) groupRef() string { return d.group.Namespace + "/" + d.group.Name }

// openLockBreaker opens the lock's breaker from the group's, which is open.
func (d *decision) openLockBreaker(lock v1alpha1.Lock, cb *v1alpha1.CircuitBreakerStatus) {
	lb := &v1alpha1.LockCircuitBreakerStatus{
		State: v1alpha1.BreakerOpen, OpenedBy: d.groupRef(), OpenedAt: cb.OpenedAt, NextProbeAt: cb.NextProbeAt,
		FailedProbes: cb.FailedProbes, LastFailureReason: cb.LastFailureReason, LastFailureExitCode: cb.LastFailureExitCode,
	}
	d.plan.LockBreakers = append(d.plan.LockBreakers, LockBreakerUpdate{Lock: lock, Breaker: lb, Event: &Event{
		Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonBreakerOpened, Message: message.Event(fmt.Sprintf(
			"The circuit breaker of group %s opened (%d items failed in a row, the last with %s): every group naming the lock holds; one probe at a time runs for all of them, the first at %s",
			d.groupRef(), len(cb.FailedItems), failureText(cb), stampText(cb.NextProbeAt))),
	}})
}

// closeLockBreaker closes the lock's open breaker after the group's closed since it opened.
func (d *decision) closeLockBreaker(lock v1alpha1.Lock, lb *v1alpha1.LockCircuitBreakerStatus, cb *v1alpha1.CircuitBreakerStatus) {
	closed := &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerClosed, ClosedAt: cb.ClosedAt, ClosedBy: d.groupRef()}
	d.plan.LockBreakers = append(d.plan.LockBreakers, LockBreakerUpdate{Lock: lock, Breaker: closed, Event: &Event{
		Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonBreakerClosed, Message: message.Event(fmt.Sprintf(
			"The circuit breaker, open since %s, closes (failed probes: %d): the breaker of group %s closed; every group naming the lock goes on",
			stampText(lb.OpenedAt), lb.FailedProbes, d.groupRef())),
	}})
}

// stampText is a time of a breaker's status for a message; "an unknown time" when absent (a
// lock's status written by hand).
func stampText(t *metav1.Time) string {
	if t == nil {
		return "an unknown time"
	}
	return t.UTC().Format(time.RFC3339)
}

// followLockBreaker opens the group's breaker, closed, as the lock's: the group holds with the
// others, on the lock's probe schedule. The lock reports the opening; the group sends no event.
func (d *decision) followLockBreaker(cb *v1alpha1.CircuitBreakerStatus, lb *v1alpha1.LockCircuitBreakerStatus) {
	*cb = v1alpha1.CircuitBreakerStatus{
		State: v1alpha1.BreakerOpen, OpenedAt: lb.OpenedAt, NextProbeAt: lb.NextProbeAt, FailedProbes: lb.FailedProbes,
		LastFailureReason: lb.LastFailureReason, LastFailureExitCode: lb.LastFailureExitCode,
	}
}

// shareProbes makes the probe schedules of the group's open breaker and of the lock's the same:
// the later nextProbeAt and the higher failedProbes, with the failure of whichever is later.
func (d *decision) shareProbes(lock v1alpha1.Lock, cb *v1alpha1.CircuitBreakerStatus, lb *v1alpha1.LockCircuitBreakerStatus) {
	groupNext, lockNext := timeOf(cb.NextProbeAt), timeOf(lb.NextProbeAt)
	switch {
	case lockNext.After(groupNext) || lockNext.Equal(groupNext) && lb.FailedProbes > cb.FailedProbes:
		cb.NextProbeAt, cb.LastFailureReason, cb.LastFailureExitCode = lb.NextProbeAt, lb.LastFailureReason, lb.LastFailureExitCode
		cb.FailedProbes = max(cb.FailedProbes, lb.FailedProbes)
	case groupNext.After(lockNext) || cb.FailedProbes > lb.FailedProbes:
		shared := lb.DeepCopy()
		shared.NextProbeAt, shared.LastFailureReason, shared.LastFailureExitCode = cb.NextProbeAt, cb.LastFailureReason, cb.LastFailureExitCode
		shared.FailedProbes = max(cb.FailedProbes, lb.FailedProbes)
		cb.FailedProbes = shared.FailedProbes
		d.plan.LockBreakers = append(d.plan.LockBreakers, LockBreakerUpdate{Lock: lock, Breaker: shared})
	}
}

// carriedBy names, for the TargetAvailable condition, the locks the group names whose breaker is
// open; empty when none is.
func (d *decision) carriedBy() string {
	var keys []string
	for _, lock := range d.breakerLocks() {
		if locks.BreakerOpen(lock) {
			keys = append(keys, lock.LockKey())
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return fmt.Sprintf(" (carried by %s for every group naming it, opened by group %s)",
		v1alpha1.DescribeLocks(keys), d.in.Locks.Locks[keys[0]].LockBreaker().OpenedBy)
}
