package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// observeTick keeps the round of a scheduled group in status: when the round of a tick later
// than status.roundStartedAt has started, it becomes the current round (once, however many ticks
// passed meanwhile), and if items of the previous round had not succeeded by then, the rounds
// merge and RoundOverrun reports it. It also writes when the next round starts, and returns
// that instant to be woken at (zero without one). Without a schedule it removes what only a
// schedule sets.
func (d *decision) observeTick() (wake time.Time) {
	st := &d.plan.Status
	cal := d.policy.Calendar
	if cal.IsZero() {
		st.NextRoundAt = nil
		meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionRoundOverrun)
		return time.Time{}
	}
	created := d.group.CreationTimestamp.Time
	if start, ok := cal.RoundStart(d.in.Now, created); ok && (st.RoundStartedAt == nil || start.After(st.RoundStartedAt.Time)) {
		// A previous round is one this schedule started (nextRoundAt was written with it), not a
		// reset of the group before it had a schedule.
		var late []string
		if st.RoundStartedAt != nil && st.NextRoundAt != nil {
			late = d.pendingInRound()
		}
		round := metav1.NewTime(start)
		st.RoundStartedAt = &round
		if len(late) > 0 {
			text := fmt.Sprintf("The round of %s started with %d items of the previous round not yet succeeded: they run first, once each, in this round: %s",
				start.UTC().Format(time.RFC3339), len(late), nameList(late))
			d.setCondition(v1alpha1.ConditionRoundOverrun, metav1.ConditionTrue, v1alpha1.ReasonRoundOverrun, text)
			d.event(corev1.EventTypeWarning, v1alpha1.ReasonRoundOverrun, text)
			d.plan.RoundOverrun = true
		}
	}
	if prev := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionRoundOverrun); prev != nil {
		if prev.Status == metav1.ConditionTrue && st.RoundStartedAt != nil && len(d.pendingInRound()) == 0 {
			text := fmt.Sprintf("Every item has succeeded in the round of %s", st.RoundStartedAt.UTC().Format(time.RFC3339))
			d.setCondition(v1alpha1.ConditionRoundOverrun, metav1.ConditionFalse, v1alpha1.ReasonRoundCompleted, text)
			d.event(corev1.EventTypeNormal, v1alpha1.ReasonRoundCompleted, text)
		} else {
			// Unchanged, but observed in this generation.
			d.setCondition(prev.Type, prev.Status, v1alpha1.Reason(prev.Reason), prev.Message)
		}
	}
	if next, ok := cal.NextRoundStart(d.in.Now, created); ok {
		stamp := metav1.NewTime(next)
		st.NextRoundAt = &stamp
		return next
	}
	st.NextRoundAt = nil
	return time.Time{}
}

// pendingInRound are the group's items that have not succeeded since status.roundStartedAt,
// parked items left out: they cannot run until the spec changes.
func (d *decision) pendingInRound() []string {
	var pending []string
	for i := range d.plan.Status.Items {
		it := &d.plan.Status.Items[i]
		if d.itemSet[it.Name] && !d.parked(it) && !d.doneInRound(it) {
			pending = append(pending, it.Name)
		}
	}
	return pending
}

// doneInRound reports whether, with a schedule, the item has succeeded in the current round
// (succeededInRound); before the first round every item waits for it.
func (d *decision) doneInRound(it *v1alpha1.ItemStatus) bool {
	round := d.plan.Status.RoundStartedAt
	if round == nil {
		return true
	}
	return succeededInRound(it, round)
}

// doneReason is the wait reason of an item that is done: with a schedule it waits for the next
// tick, in mode EachOnce for a reset.
func (d *decision) doneReason() v1alpha1.WaitReason {
	if !d.policy.Calendar.IsZero() {
		return v1alpha1.WaitNextTick
	}
	return v1alpha1.WaitDone
}

// heldUntil is when an item held for reason may start: the next round for one that waits for the
// next tick; absent for the other reasons, which hold it for no known time.
func (d *decision) heldUntil(reason v1alpha1.WaitReason) *metav1.Time {
	if reason != v1alpha1.WaitNextTick || d.plan.Status.NextRoundAt == nil {
		return nil
	}
	next := *d.plan.Status.NextRoundAt
	return &next
}
