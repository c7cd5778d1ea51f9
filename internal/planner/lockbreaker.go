package planner

import (
	"fmt"
	"slices"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
)

// A lock that carries the circuit breaker (spec.circuitBreaker: Shared) shares it among the groups
// naming it: its review (locks.Decide) leads the lock's breaker from the groups' breakers, and each
// group follows the lock's here, compared by their times so that a pass that decides again from
// the same statuses decides the same:
//
//	group Open,   lock closed since the group opened             -> the group closes: another group's probe succeeded
//	group Open,   lock Open                                      -> the group takes the later nextProbeAt and the higher failedProbes
//	group Closed, lock Open, group closed before it opened        -> the group opens too and holds, on the lock's probe schedule
//
// The lock reports its own opening and closing; a group that follows it sends no event.

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

// followLockBreakers follows the breakers that the group's locks carry, once recordCurrentRun and
// reconcileBreaker have brought the group's own breaker up to date.
func (d *decision) followLockBreakers() {
	cb := d.breaker()
	if cb == nil {
		return
	}
	for _, lock := range d.breakerLocks() {
		lb := lock.LockBreaker()
		lockOpen := locks.BreakerOpen(lock)
		switch {
		case cb.State == v1alpha1.BreakerOpen && lockOpen:
			shareProbes(cb, lb)
		case cb.State == v1alpha1.BreakerOpen && lb != nil && lb.ClosedAt != nil && !lb.ClosedAt.Before(cb.OpenedAt):
			d.markClosed(cb)
		case cb.State != v1alpha1.BreakerOpen && lockOpen && (cb.ClosedAt == nil || cb.ClosedAt.Before(lb.OpenedAt)):
			followLockBreaker(cb, lb)
		}
	}
}

// followLockBreaker opens the group's breaker, closed, as the lock's: the group holds with the
// others, on the lock's probe schedule.
func followLockBreaker(cb *v1alpha1.CircuitBreakerStatus, lb *v1alpha1.LockCircuitBreakerStatus) {
	*cb = v1alpha1.CircuitBreakerStatus{
		State: v1alpha1.BreakerOpen, OpenedAt: lb.OpenedAt, NextProbeAt: lb.NextProbeAt, FailedProbes: lb.FailedProbes,
		LastFailureReason: lb.LastFailureReason, LastFailureExitCode: lb.LastFailureExitCode,
	}
}

// shareProbes gives the group's open breaker the lock's probe schedule when the lock's is later,
// or fails more: the later nextProbeAt and the higher failedProbes, with the failure of whichever
// is later. The lock takes the group's the same way at its review.
func shareProbes(cb *v1alpha1.CircuitBreakerStatus, lb *v1alpha1.LockCircuitBreakerStatus) {
	if groupNext, lockNext := timeOf(cb.NextProbeAt), timeOf(lb.NextProbeAt); lockNext.After(groupNext) {
		cb.NextProbeAt, cb.LastFailureReason, cb.LastFailureExitCode = lb.NextProbeAt, lb.LastFailureReason, lb.LastFailureExitCode
	}
	cb.FailedProbes = max(cb.FailedProbes, lb.FailedProbes)
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
