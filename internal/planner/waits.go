package planner

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/runstats"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// untimedWait returns why the item waits whatever the time: it runs now, it is parked, it is done
// (mode EachOnce) or the group is suspended; empty when the schedule decides.
func (d *decision) untimedWait(it *v1alpha1.ItemStatus) v1alpha1.WaitReason {
	st := &d.plan.Status
	switch {
	case st.CurrentRun != nil && st.CurrentRun.Item == it.Name:
		return v1alpha1.WaitRunning
	case !d.itemSet[it.Name]:
		return v1alpha1.WaitRemoved
	case d.parked(it):
		return v1alpha1.WaitParked
	case d.done(it):
		return d.doneReason()
	case d.policy.Suspended != "":
		return v1alpha1.WaitSuspended
	}
	return ""
}

// parked reports whether the item failed with a do-not-retry exit code in the group's current
// generation.
func (d *decision) parked(it *v1alpha1.ItemStatus) bool {
	return it.ParkedGeneration != 0 && it.ParkedGeneration == d.group.Generation
}

// done reports whether, in mode EachOnce or with a schedule, the item has succeeded in the
// current round, and no failed verification of that success makes it due again
// (spec.verify.onFailure RerunItem).
func (d *decision) done(it *v1alpha1.ItemStatus) bool {
	if d.unverified(it) {
		return false
	}
	if !d.policy.Calendar.IsZero() {
		return d.doneInRound(it)
	}
	if !d.policy.EachOnce || it.LastSuccess == nil {
		return false
	}
	round := d.plan.Status.RoundStartedAt
	return round == nil || succeededInRound(it, round)
}

// succeededInRound reports whether the item's last success belongs to the round that started at
// round: it came after the round's start, or in the same second by a run started in the round.
// Status keeps whole seconds: the pass that starts a round starts its first item with the round's
// stamp, and that run's success may be clamped to its start; a run of the round before that ended
// in the second the round started had started before it.
func succeededInRound(it *v1alpha1.ItemStatus, round *metav1.Time) bool {
	switch {
	case it.LastSuccess == nil || it.LastSuccess.Before(round):
		return false
	case round.Before(it.LastSuccess):
		return true
	}
	return it.LastStarted != nil && !it.LastStarted.Before(round)
}

// setWaits writes for each item when it may start and why not before, the same reasons the
// selection uses, and returns when the first waiting item may start, to be woken then, while the
// group is idle (zero otherwise). A parked item of an earlier generation is released.
func (d *decision) setWaits() (wake time.Time) {
	var first wakeUp
	st := &d.plan.Status
	for i := range st.Items {
		it := &st.Items[i]
		if it.ParkedGeneration != 0 && !d.parked(it) {
			it.ParkedGeneration = 0
		}
		if reason := d.untimedWait(it); reason != "" {
			it.NextEligibleAt, it.WaitReason = d.heldUntil(reason), reason
			continue
		}
		w := d.waitOf(it)
		it.NextEligibleAt, it.WaitReason = optionalTime(w.Until), w.Reason
		if st.CurrentRun == nil {
			first.at(w.Until)
		}
	}
	return first.earliest
}

// scheduleItem is the part of an item's status that the schedule reads.
func scheduleItem(it *v1alpha1.ItemStatus) schedule.Item {
	return schedule.Item{
		Name:         it.Name,
		LastSuccess:  timeOf(it.LastSuccess),
		LastFailure:  timeOf(it.LastFailure),
		FailureCount: it.FailureCount,
		ExpectedRun:  time.Duration(runstats.Longest(it.RecentRunSeconds)) * time.Second,
	}
}

// timeOf is the instant status stores, zero when absent.
func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

// optionalTime is t as status stores it: absent when zero, in whole seconds so that what is
// written is what is read back.
func optionalTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	stamp := metav1.NewTime(t.Truncate(time.Second))
	return &stamp
}
