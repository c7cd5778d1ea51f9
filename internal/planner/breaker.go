package planner

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// The circuit breaker (spec.circuitBreaker) treats failures of many items in a row as one
// problem of the target they share. Its state is status.circuitBreaker, changed only by the
// outcomes recordCurrentRun records (each recorded once), by a reset and by the spec, so a
// pass that decides again from the same status decides the same:
//
//	Closed --consecutiveItemFailures distinct items fail in a row--> Open (event BreakerOpened)
//	Open   --a probe fails-->   Open, failedProbes+1, nextProbeAt after a doubled wait
//	Open   --a probe succeeds, oaat.io/reset changes, spec.circuitBreaker removed--> Closed (event BreakerClosed)
//
// While it is open every run is a probe: a scheduled one, at most one at a time, once
// nextProbeAt has passed, or an on-demand run, which runs as usual. A failed probe changes neither
// the item's failure count nor its cool-off, and no item waits for a cool-off of its own. Once it
// has closed (closedAt), an item whose last failure came before is started as if it had never
// failed, so the group goes on at once in its usual order, the items whose failures opened the
// breaker included.

// maxBreakerReason is the longest status.circuitBreaker.lastFailureReason the schema accepts.
const maxBreakerReason = 1024

// breakerPolicy is spec.circuitBreaker read for decisions.
type breakerPolicy struct {
	threshold        int
	exitCodes        []int32
	reasons          []string
	probeInterval    time.Duration
	maxProbeInterval time.Duration
}

// readBreakerPolicy reads spec.circuitBreaker; the policy holds what could be read even when an
// interval cannot be, so that the breaker keeps its state while the spec is invalid.
func readBreakerPolicy(cb *v1alpha1.CircuitBreaker) (*breakerPolicy, error) {
	threshold := int(cb.ConsecutiveItemFailures)
	if threshold == 0 {
		threshold = v1alpha1.DefaultConsecutiveItemFailures
	}
	b := &breakerPolicy{threshold: max(threshold, 2), exitCodes: cb.ExitCodes, reasons: cb.Reasons}
	probeInterval, maxProbeInterval := cb.ProbeInterval, cb.MaxProbeInterval
	if probeInterval == "" {
		probeInterval = v1alpha1.DefaultProbeInterval
	}
	if maxProbeInterval == "" {
		maxProbeInterval = v1alpha1.DefaultMaxProbeInterval
	}
	var first error
	var err error
	if b.probeInterval, err = parseDuration("spec.circuitBreaker.probeInterval", probeInterval); err != nil {
		first = err
	}
	if b.maxProbeInterval, err = parseDuration("spec.circuitBreaker.maxProbeInterval", maxProbeInterval); err != nil && first == nil {
		first = err
	}
	return b, first
}

// counts reports whether a failure counts towards opening the breaker: any failure without
// exitCodes and reasons, else one whose exit code or reason they list; never one with an exit
// code of spec.exitCodes.doNotRetry, which says the item itself cannot succeed.
func (b *breakerPolicy) counts(out ended) bool {
	return out.doNotRetry == nil && groupspec.FailureCounting{ExitCodes: b.exitCodes, Reasons: b.reasons}.Counts(out.exitCode, out.reason)
}

// probeWait is the wait before the next probe after failedProbes failed probes: probeInterval
// doubled with each, at most maxProbeInterval.
func (b *breakerPolicy) probeWait(failedProbes int32) time.Duration {
	wait := b.probeInterval
	for range failedProbes {
		if wait >= b.maxProbeInterval/2 {
			return b.maxProbeInterval
		}
		wait *= 2
	}
	return min(wait, b.maxProbeInterval)
}

// breaker is status.circuitBreaker, added (closed) when the spec has a breaker and status has
// none yet; nil without spec.circuitBreaker.
func (d *decision) breaker() *v1alpha1.CircuitBreakerStatus {
	if d.policy.breaker == nil {
		return nil
	}
	st := &d.plan.Status
	if st.CircuitBreaker == nil {
		st.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed}
	}
	return st.CircuitBreaker
}

// breakerOpen reports whether the group's breaker is open.
func (d *decision) breakerOpen() bool {
	cb := d.breaker()
	return cb != nil && cb.State == v1alpha1.BreakerOpen
}

// failedProbe reports whether a run that ended so is a failed probe, which the item's failure
// count and cool-off do not record: it failed while the breaker is open.
func (d *decision) failedProbe(out ended) bool {
	return out.result == v1alpha1.ResultFailed && d.breakerOpen()
}

// observeForBreaker updates the breaker with the outcome of a run of item, once recordCurrentRun
// has recorded it for the item.
func (d *decision) observeForBreaker(item string, out ended) {
	cb := d.breaker()
	if cb == nil || out.result == v1alpha1.ResultInterrupted {
		return
	}
	b := d.policy.breaker
	switch {
	case cb.State == v1alpha1.BreakerOpen && out.result == v1alpha1.ResultSucceeded:
		d.plan.Probes = append(d.plan.Probes, v1alpha1.ResultSucceeded)
		d.closeBreaker(fmt.Sprintf("item %q succeeded as a probe", item))
	case cb.State == v1alpha1.BreakerOpen:
		d.plan.Probes = append(d.plan.Probes, v1alpha1.ResultFailed)
		cb.FailedProbes++
		noteFailure(cb, out)
		cb.NextProbeAt = optionalTime(out.finishedAt.Add(b.probeWait(cb.FailedProbes)))
	case out.result == v1alpha1.ResultSucceeded || !b.counts(out):
		cb.FailedItems = nil
	default:
		if !slices.Contains(cb.FailedItems, item) {
			cb.FailedItems = append(cb.FailedItems, item)
		}
		noteFailure(cb, out)
		if len(cb.FailedItems) >= b.threshold {
			d.openBreaker(out.finishedAt.Time)
		}
	}
}

// noteFailure keeps the reason and exit code of the failure.
func noteFailure(cb *v1alpha1.CircuitBreakerStatus, out ended) {
	cb.LastFailureReason, cb.LastFailureExitCode = message.Truncate(out.reason, maxBreakerReason), out.exitCode
}

// openBreaker opens the breaker after the failure that ended at failedAt.
func (d *decision) openBreaker(failedAt time.Time) {
	cb := d.plan.Status.CircuitBreaker
	opened := d.stamp
	cb.State, cb.OpenedAt, cb.ClosedAt, cb.FailedProbes = v1alpha1.BreakerOpen, &opened, nil, 0
	cb.NextProbeAt = optionalTime(failedAt.Add(d.policy.breaker.probeInterval))
	d.event(corev1.EventTypeWarning, v1alpha1.ReasonBreakerOpened, fmt.Sprintf(
		"%d items failed in a row (%s), the last with %s: the circuit breaker opens; no item's failure count grows, one item at a time runs as a probe, the first at %s",
		len(cb.FailedItems), nameList(cb.FailedItems), locks.FailureText(cb), cb.NextProbeAt.UTC().Format(time.RFC3339)))
}

// closeBreaker closes an open breaker, for the reason why.
func (d *decision) closeBreaker(why string) {
	cb := d.plan.Status.CircuitBreaker
	if cb == nil || cb.State != v1alpha1.BreakerOpen {
		return
	}
	text := fmt.Sprintf("The circuit breaker closes (failed probes: %d): %s; items run in their usual order", cb.FailedProbes, why)
	if cb.OpenedAt != nil {
		text = fmt.Sprintf("The circuit breaker, open since %s, closes (failed probes: %d): %s; items run in their usual order",
			cb.OpenedAt.UTC().Format(time.RFC3339), cb.FailedProbes, why)
	}
	d.event(corev1.EventTypeNormal, v1alpha1.ReasonBreakerClosed, text)
	d.markClosed(cb)
}

// markClosed closes the breaker now, keeping nothing of its open state.
func (d *decision) markClosed(cb *v1alpha1.CircuitBreakerStatus) {
	closed := d.stamp
	*cb = v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed, ClosedAt: &closed}
}

// reconcileBreaker brings the breaker's status in line with the spec and the reset annotation:
// without spec.circuitBreaker (nor a lock carrying one, carriedBreakerPolicy) the breaker (an open
// one closes) and its condition go; a reset observed in this pass closes an open breaker, as it
// releases parked items.
func (d *decision) reconcileBreaker() {
	st := &d.plan.Status
	if d.policy.breaker == nil {
		d.closeBreaker("the group has no spec.circuitBreaker, nor a lock that carries one")
		st.CircuitBreaker = nil
		meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionTargetAvailable)
		return
	}
	d.breaker()
	if st.ObservedReset != d.group.Status.ObservedReset {
		d.closeBreaker(fmt.Sprintf("annotation %s changed", v1alpha1.AnnotationReset))
	}
}

// startProbe starts, while the breaker is open and nextProbeAt has passed, the probe: among the
// items with no untimed wait that are eligible (their failures waived), those probed least
// recently since the breaker opened (never first), then by the usual order. Before nextProbeAt
// it returns that instant.
func (d *decision) startProbe() (wake time.Time) {
	st := &d.plan.Status
	if next := timeOf(st.CircuitBreaker.NextProbeAt); d.in.Now.Before(next) {
		return next
	}
	var free []schedule.Item
	for i := range st.Items {
		if d.untimedWait(&st.Items[i]) == "" {
			free = append(free, d.scheduleItemOf(&st.Items[i]))
		}
	}
	candidates := d.leastRecentlyProbed(d.policy.Timing.Candidates(free, d.in.Now))
	if next, ok := schedule.Choose(candidates, d.in.Rand, d.requestedItem()); ok {
		return d.start(next.Name, "")
	}
	return time.Time{}
}

// scheduleItemOf is the part of an item's status that the selection and the waits read
// (ScheduleItem, with the breaker in force, and whether a failed verification makes it due once
// its failureCoolOff has passed).
func (d *decision) scheduleItemOf(it *v1alpha1.ItemStatus) schedule.Item {
	item := ScheduleItem(d.breaker(), it)
	if d.unverified(it) {
		item.Unverified, item.VerifyFailure = true, it.LastVerifyFailure.Time
	}
	return item
}

// ScheduleItem is the part of an item's status that the selection and the waits read, given the
// group's circuit breaker (nil without spec.circuitBreaker): the item's failures hold it in no
// cool-off while the breaker is open (the probes have their own schedule), and once it has closed,
// when the item's last failure came before.
func ScheduleItem(cb *v1alpha1.CircuitBreakerStatus, it *v1alpha1.ItemStatus) schedule.Item {
	item := scheduleItem(it)
	switch {
	case cb == nil || it.LastFailure == nil:
	case cb.State == v1alpha1.BreakerOpen:
		item.CoolOffWaived = true
	default:
		item.CoolOffWaived = cb.ClosedAt != nil && !cb.ClosedAt.Before(it.LastFailure)
	}
	return item
}

// leastRecentlyProbed keeps, of the candidates, those whose last probe (a start since the
// breaker opened) is the oldest, never probed first, so that an item that fails for a reason of
// its own cannot keep the breaker open: the probes go round the items.
func (d *decision) leastRecentlyProbed(candidates []schedule.Item) []schedule.Item {
	opened := d.plan.Status.CircuitBreaker.OpenedAt
	probedAt := func(name string) time.Time {
		started := d.item(name).LastStarted
		if started == nil || opened == nil || started.Before(opened) {
			return time.Time{}
		}
		return started.Time
	}
	var kept []schedule.Item
	var oldest time.Time
	for _, c := range candidates {
		switch at := probedAt(c.Name); {
		case len(kept) == 0 || at.Before(oldest):
			kept, oldest = []schedule.Item{c}, at
		case at.Equal(oldest):
			kept = append(kept, c)
		}
	}
	return kept
}

// waitOf is when the item, not held by the group, may start and why not before: as the schedule
// says (failures waived as ScheduleItem says); while the breaker is open, not before
// nextProbeAt (WaitBreakerOpen), and, while a probe runs, until its outcome.
func (d *decision) waitOf(it *v1alpha1.ItemStatus) schedule.Wait {
	w := d.policy.Timing.WaitOf(d.scheduleItemOf(it), d.in.Now)
	if !d.breakerOpen() {
		return w
	}
	next := timeOf(d.plan.Status.CircuitBreaker.NextProbeAt)
	switch {
	case next.After(d.in.Now) && next.After(w.Until):
		return schedule.Wait{Until: next, Reason: v1alpha1.WaitBreakerOpen}
	case w.Until.IsZero() && d.plan.Status.CurrentRun != nil:
		return schedule.Wait{Reason: v1alpha1.WaitBreakerOpen}
	}
	return w
}

// setBreakerCondition sets TargetAvailable from the breaker's state, for a group with a breaker.
func (d *decision) setBreakerCondition() {
	cb := d.breaker()
	if cb == nil {
		return
	}
	threshold := d.policy.breaker.threshold
	if cb.State != v1alpha1.BreakerOpen {
		d.setCondition(v1alpha1.ConditionTargetAvailable, metav1.ConditionTrue, v1alpha1.ReasonBreakerClosed,
			fmt.Sprintf("The circuit breaker is closed: %d of the %d distinct items in a row whose failures open it have failed",
				len(cb.FailedItems), threshold))
		return
	}
	probe := "the next probe starts once an item is eligible"
	switch cr := d.plan.Status.CurrentRun; {
	case cr != nil:
		probe = fmt.Sprintf("item %q runs as a probe", cr.Item)
	case cb.NextProbeAt != nil && d.in.Now.Before(cb.NextProbeAt.Time):
		probe = "the next probe starts at " + cb.NextProbeAt.UTC().Format(time.RFC3339)
	}
	if carried := d.carriedBy(); carried != "" {
		d.setCondition(v1alpha1.ConditionTargetAvailable, metav1.ConditionFalse, v1alpha1.ReasonBreakerOpen,
			fmt.Sprintf("The circuit breaker is open%s: the last failure with %s; failed probes: %d; %s",
				carried, locks.FailureText(cb), cb.FailedProbes, probe))
		return
	}
	d.setCondition(v1alpha1.ConditionTargetAvailable, metav1.ConditionFalse, v1alpha1.ReasonBreakerOpen,
		fmt.Sprintf("The circuit breaker is open: %d items failed in a row (%s), the last failure with %s; failed probes: %d; %s",
			len(cb.FailedItems), nameList(cb.FailedItems), locks.FailureText(cb), cb.FailedProbes, probe))
}
