package planner

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/ondemand"
)

// onDemandRun returns the group's OaatRun of that name, nil when there is none.
func (d *decision) onDemandRun(name string) *v1alpha1.OaatRun {
	for i := range d.in.OnDemandRuns {
		if d.in.OnDemandRuns[i].Name == name {
			return &d.in.OnDemandRuns[i]
		}
	}
	return nil
}

// settleOnDemandRun records in an on-demand run how its run ended. The group's status must not
// record the run's end before this is written (EndsRun).
func (d *decision) settleOnDemandRun(cr *v1alpha1.CurrentRun, out ended) {
	onDemandRun := d.onDemandRun(cr.OaatRun)
	if cr.OaatRun == "" || onDemandRun == nil || onDemandRun.Status.Phase.Finished() {
		return
	}
	d.plan.FinalOnDemandRuns = append(d.plan.FinalOnDemandRuns, OnDemandRunUpdate{
		OnDemandRun: onDemandRun, Status: d.settled(onDemandRun, cr.Item, cr.PodName, cr.StartedAt, out), EndsRun: true,
	})
}

// settleFromHistory settles an open on-demand run whose run the group has recorded already (its
// pod is the last run of its item), with the outcome the item's status keeps: its final status
// was not written when the group recorded the run (an older version of the operator went on after
// a conflict), or it was and the cache has not caught up, when writing it again changes nothing.
func (d *decision) settleFromHistory(onDemandRun *v1alpha1.OaatRun) bool {
	if onDemandRun.Status.PodName == "" {
		return false
	}
	for i := range d.plan.Status.Items {
		it := &d.plan.Status.Items[i]
		if it.Name != onDemandRun.Spec.Item || it.LastPodName != onDemandRun.Status.PodName {
			continue
		}
		started := onDemandRun.Status.StartedAt
		if started == nil {
			started = it.LastStarted
		}
		var startedAt metav1.Time
		if started != nil {
			startedAt = *started
		}
		out := ended{result: recordedResult(it), exitCode: it.LastExitCode, reason: it.LastReason}
		d.plan.FinalOnDemandRuns = append(d.plan.FinalOnDemandRuns, OnDemandRunUpdate{
			OnDemandRun: onDemandRun, Status: d.settled(onDemandRun, it.Name, it.LastPodName, startedAt, out),
		})
		return true
	}
	return false
}

// recordedResult is how the last recorded run of an item ended, as its status says: a success
// clears the failure count and a failure raises it, an interruption changes neither; a failed
// probe of an open circuit breaker changes neither either, but its start is after the last
// success (a success is recorded at or after its run's start).
func recordedResult(it *v1alpha1.ItemStatus) v1alpha1.RunResult {
	switch {
	case it.LastReason == string(v1alpha1.ReasonInterrupted):
		return v1alpha1.ResultInterrupted
	case it.FailureCount == 0 && it.LastSuccess != nil && (it.LastStarted == nil || !it.LastSuccess.Before(it.LastStarted)):
		return v1alpha1.ResultSucceeded
	}
	return v1alpha1.ResultFailed
}

// settled is the final status of an on-demand run whose run of item in pod ended with out.
func (d *decision) settled(onDemandRun *v1alpha1.OaatRun, item, pod string, started metav1.Time, out ended) v1alpha1.OaatRunStatus {
	status := onDemandRun.Status
	status.Phase, status.Reason = v1alpha1.OaatRunFailed, out.reason
	if out.result == v1alpha1.ResultSucceeded {
		status.Phase = v1alpha1.OaatRunSucceeded
	}
	status.Message = message.OnDemandRun(fmt.Sprintf("Item %q %s in pod %s%s", item, out.result, pod, out.describe()))
	status.PodName, status.ExitCode = pod, out.exitCode
	if status.StartedAt == nil && !started.IsZero() {
		status.StartedAt = &started
	}
	finished := d.stamp
	status.FinishedAt = &finished
	return status
}

// finishOnDemandRun plans an on-demand run's final status, stamped with the decision's time.
func (d *decision) finishOnDemandRun(onDemandRun *v1alpha1.OaatRun, status v1alpha1.OaatRunStatus) {
	finished := d.stamp
	status.FinishedAt = &finished
	d.plan.FinalOnDemandRuns = append(d.plan.FinalOnDemandRuns, OnDemandRunUpdate{OnDemandRun: onDemandRun, Status: status})
}

// reviewOnDemandRuns rejects the open on-demand runs that cannot be served (an item the group does
// not have, a duplicate of an older pending one for the same item) and queues the others, oldest
// first. An on-demand run that says it is in progress while the group runs something else has
// either had its run recorded by the group (its pod is the last run of its item): it is settled
// with that run's outcome; or lost its run (the group's status was overwritten): then it fails
// rather than waiting forever.
func (d *decision) reviewOnDemandRuns() {
	onDemandRuns := make([]*v1alpha1.OaatRun, 0, len(d.in.OnDemandRuns))
	for i := range d.in.OnDemandRuns {
		onDemandRuns = append(onDemandRuns, &d.in.OnDemandRuns[i])
	}
	slices.SortStableFunc(onDemandRuns, func(a, b *v1alpha1.OaatRun) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	queued := map[string]string{} // item -> the oldest pending on-demand run for it
	cr := d.plan.Status.CurrentRun
	for _, onDemandRun := range onDemandRuns {
		phase := onDemandRun.Status.Phase
		switch {
		case phase.Finished() || d.settling(onDemandRun):
		case cr != nil && cr.OaatRun == onDemandRun.Name:
		case d.settleFromHistory(onDemandRun):
		case phase == v1alpha1.OaatRunInProgress:
			d.finishOnDemandRun(onDemandRun, ondemand.WithPhase(onDemandRun.Status, v1alpha1.OaatRunFailed, v1alpha1.ReasonPodNotFound,
				"the group no longer runs this on-demand run's item: its status was changed by someone else"))
		case !d.itemSet[onDemandRun.Spec.Item]:
			d.finishOnDemandRun(onDemandRun, ondemand.WithPhase(onDemandRun.Status, v1alpha1.OaatRunRejected, v1alpha1.ReasonUnknownItem,
				fmt.Sprintf("%q is not an item of OaatGroup %s", onDemandRun.Spec.Item, d.group.Name)))
		case queued[onDemandRun.Spec.Item] != "":
			d.finishOnDemandRun(onDemandRun, ondemand.WithPhase(onDemandRun.Status, v1alpha1.OaatRunRejected, v1alpha1.ReasonDuplicate,
				fmt.Sprintf("OaatRun %s already asks to run item %q and is still pending", queued[onDemandRun.Spec.Item], onDemandRun.Spec.Item)))
		default:
			queued[onDemandRun.Spec.Item] = onDemandRun.Name
			d.queue = append(d.queue, onDemandRun)
		}
	}
}

// settling reports whether this decision already gives the on-demand run its final status.
func (d *decision) settling(onDemandRun *v1alpha1.OaatRun) bool {
	return slices.ContainsFunc(d.plan.FinalOnDemandRuns, func(u OnDemandRunUpdate) bool { return u.OnDemandRun == onDemandRun })
}

// nextOnDemandRun returns the oldest queued on-demand run that may start now: none while the group
// is suspended, and one that respects blackout windows waits while one is open.
func (d *decision) nextOnDemandRun() *v1alpha1.OaatRun {
	if d.policy.Suspended != "" {
		return nil
	}
	_, blackout := d.policy.Timing.Windows.FreeAt(d.in.Now)
	for _, onDemandRun := range d.queue {
		if !blackout || onDemandRun.Spec.IgnoreBlackoutWindows {
			return onDemandRun
		}
	}
	return nil
}

// updateOpenOnDemandRuns says, in each queued on-demand run, whether it runs or what it waits for.
func (d *decision) updateOpenOnDemandRuns() {
	cr := d.plan.Status.CurrentRun
	for i := range d.in.OnDemandRuns {
		onDemandRun := &d.in.OnDemandRuns[i]
		status := onDemandRun.Status
		switch {
		case cr != nil && cr.OaatRun == onDemandRun.Name:
			status.Phase, status.Reason = v1alpha1.OaatRunInProgress, string(v1alpha1.ReasonItemRunning)
			status.Message = message.OnDemandRun(fmt.Sprintf("Item %q runs in pod %s", cr.Item, cr.PodName))
			status.PodName = cr.PodName
			if status.StartedAt == nil {
				started := cr.StartedAt
				status.StartedAt = &started
			}
		case slices.Contains(d.queue, onDemandRun):
			status.Phase = v1alpha1.OaatRunPending
			reason, text := d.pendingReason(onDemandRun)
			status.Reason, status.Message = reason, message.OnDemandRun(text)
		default:
			continue
		}
		if !equality.Semantic.DeepEqual(status, onDemandRun.Status) {
			d.plan.OpenOnDemandRuns = append(d.plan.OpenOnDemandRuns, OnDemandRunUpdate{OnDemandRun: onDemandRun, Status: status})
		}
	}
}

// pendingReason says what a queued on-demand run waits for, in terms that change only when the
// group's state does.
func (d *decision) pendingReason(onDemandRun *v1alpha1.OaatRun) (string, string) {
	switch {
	case d.policyErr != nil:
		return string(v1alpha1.ReasonGroupNotReady), "the group's spec cannot be used: " + d.policyErr.Error()
	case d.policy.Suspended != "":
		return string(v1alpha1.WaitSuspended), "the group is suspended"
	}
	if ready := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionReady); ready != nil && ready.Status != metav1.ConditionTrue {
		return string(v1alpha1.ReasonGroupNotReady), "the group is not Ready: " + ready.Message
	}
	if end, blackout := d.policy.Timing.Windows.FreeAt(d.in.Now); blackout && !onDemandRun.Spec.IgnoreBlackoutWindows {
		return string(v1alpha1.WaitBlackout), "a blackout window is open until " + end.UTC().Format(time.RFC3339)
	}
	if w := d.plan.Status.LockWait; w != nil {
		return string(v1alpha1.WaitLockHeld), "waits for a slot of " + v1alpha1.DescribeLocks(w.Locks)
	}
	return string(v1alpha1.ReasonQueued), "waits for the group's running item or older on-demand runs"
}

// annotateOnDemandRun marks the pod of an on-demand run with the name of its OaatRun.
func annotateOnDemandRun(pod *corev1.Pod, onDemandRun string) {
	if onDemandRun == "" {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[v1alpha1.AnnotationOaatRun] = onDemandRun
}
