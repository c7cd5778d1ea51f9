package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// maxRecentRuns is how many run durations an item keeps in status.
const maxRecentRuns = 5

// recordCurrentRun records the outcome of the current run once its pod has ended or is gone.
// A pod that is being deleted but still runs is waited for, so that it cannot overlap the next.
func (d *decision) recordCurrentRun() {
	cr := d.plan.Status.CurrentRun
	if cr == nil {
		return
	}
	pod := d.pods.current
	var out ended
	switch {
	case pod == nil:
		out = ended{
			result:     v1alpha1.ResultFailed,
			finishedAt: d.stamp,
			reason:     string(v1alpha1.ReasonPodNotFound),
			detail:     "its pod no longer exists: deleted before it ended, or never created",
		}
		if d.pods.disruptedGone(cr.PodName) {
			out = stopped(v1alpha1.StopDisrupted, out)
		}
	case podbuild.Terminal(pod):
		out = d.endedPod(pod)
		if out.result == v1alpha1.ResultFailed && podbuild.Disrupted(pod) {
			out = stopped(v1alpha1.StopDisrupted, out)
		}
	default:
		return
	}
	if cr.StopReason != "" && out.result != v1alpha1.ResultSucceeded {
		out = stopped(cr.StopReason, out)
	}
	// The run's duration is measured on the node's clock alone (its start and end), then the end
	// is placed on the operator's: a node clock ahead would otherwise make the item wait its
	// frequency plus the skew, and one behind could place an EachOnce success before the round
	// (or the run) began.
	started := cr.StartedAt
	if pod != nil && pod.Status.StartTime != nil {
		started = *pod.Status.StartTime
	}
	run := min(max(out.finishedAt.Sub(started.Time), 0), max(d.stamp.Sub(cr.StartedAt.Time), 0))
	out.finishedAt = clampTime(out.finishedAt, cr.StartedAt, d.stamp)

	if cr.Purpose == v1alpha1.PurposeVerify {
		d.recordVerification(cr, out, run)
		return
	}
	failedProbe := d.failedProbe(out)
	if failedProbe {
		out.detail = joinDetail(out.detail, "a failed probe of the open circuit breaker: the item's failure count and cool-off do not grow")
	}
	it := d.item(cr.Item)
	it.LastPodName = cr.PodName
	it.LastResult = out.result
	it.LastExitCode = out.exitCode
	it.LastReason = out.reason
	switch out.result {
	case v1alpha1.ResultSucceeded:
		it.LastSuccess = &out.finishedAt
		it.FailureCount = 0
		it.ParkedGeneration = 0
		d.awaitVerification(it, cr.PodName, pod, out)
	case v1alpha1.ResultFailed:
		if !failedProbe {
			it.LastFailure = &out.finishedAt
			it.FailureCount++
		}
	case v1alpha1.ResultInterrupted:
		// Neither a success nor a failure: the item's record and its cool-off stay as they were.
	}
	d.plan.Status.CurrentRun = nil
	if pod != nil && out.result != v1alpha1.ResultInterrupted {
		it.RecentRunSeconds = append(it.RecentRunSeconds, int64(run.Round(time.Second)/time.Second))
		it.RecentRunSeconds = it.RecentRunSeconds[max(len(it.RecentRunSeconds)-maxRecentRuns, 0):]
		d.announceUnusualRun(it, out.result)
	}
	d.plan.Finished = append(d.plan.Finished, Outcome{Item: cr.Item, Result: out.result, Duration: run})
	d.settleOnDemandRun(cr, out)
	d.announceOutcome(cr, out)
	d.observeForBreaker(cr.Item, out)
	d.parkAfter(it, out, failedProbe)
}

// parkAfter parks the item whose run says that retrying it does not help: it exited with a code
// of spec.exitCodes.doNotRetry, or a failure that counts (not a probe of the open breaker) brought
// its failures since its last success to spec.maxConsecutiveFailures.
func (d *decision) parkAfter(it *v1alpha1.ItemStatus, out ended, failedProbe bool) {
	var why string
	limit := d.group.Spec.MaxConsecutiveFailures
	switch {
	case out.doNotRetry != nil:
		why = fmt.Sprintf("exited with code %d, listed in spec.exitCodes.doNotRetry", *out.doNotRetry)
	case out.result == v1alpha1.ResultFailed && !failedProbe && limit > 0 && it.FailureCount >= limit:
		why = fmt.Sprintf("failed: its failures since its last success (%d) reached spec.maxConsecutiveFailures (%d)", it.FailureCount, limit)
	default:
		return
	}
	it.ParkedGeneration = d.group.Generation
	d.event(corev1.EventTypeWarning, v1alpha1.ReasonItemParked, fmt.Sprintf(
		"Item %q %s: it does not run again until the group's spec changes, the group is reset, or an OaatRun of the item runs (kubectl oaat unpark)",
		it.Name, why))
}

// joinDetail appends more to a run's detail.
func joinDetail(detail, more string) string {
	if detail == "" {
		return more
	}
	return detail + "; " + more
}

// clampTime returns t within [earliest, latest]; latest wins when they cross.
func clampTime(t, earliest, latest metav1.Time) metav1.Time {
	if t.Before(&earliest) {
		t = earliest
	}
	if latest.Before(&t) {
		t = latest
	}
	return t
}

// outcomeEvents are the events that report a run's outcome, one row per result (exhaustive
// checks that every v1alpha1.RunResult has one): its type, reason and the verb of its message.
var outcomeEvents = map[v1alpha1.RunResult]struct {
	eventType string
	reason    v1alpha1.Reason
	verb      string
}{
	v1alpha1.ResultSucceeded:   {corev1.EventTypeNormal, v1alpha1.ReasonRunSucceeded, "succeeded"},
	v1alpha1.ResultFailed:      {corev1.EventTypeWarning, v1alpha1.ReasonRunFailed, "failed"},
	v1alpha1.ResultInterrupted: {corev1.EventTypeNormal, v1alpha1.ReasonRunInterrupted, "was interrupted"},
}

// announceOutcome emits the event of the run's outcome (outcomeEvents); with spec.runEvents
// Failures, a success has none: status and the metrics record it.
func (d *decision) announceOutcome(cr *v1alpha1.CurrentRun, out ended) {
	if out.result == v1alpha1.ResultSucceeded && d.group.Spec.RunEvents == v1alpha1.RunEventsFailures {
		return
	}
	e := outcomeEvents[out.result]
	d.event(e.eventType, e.reason, fmt.Sprintf("Item %q %s in pod %s%s", cr.Item, e.verb, cr.PodName, out.describe()))
}

// ended is how a run ended.
type ended struct {
	result     v1alpha1.RunResult
	finishedAt metav1.Time
	exitCode   *int32
	reason     string
	detail     string
	// doNotRetry is the exit code of spec.exitCodes.doNotRetry the run failed with, if any.
	doNotRetry *int32
}

func (e ended) describe() string {
	s := ": " + e.reason
	if e.exitCode != nil {
		s += fmt.Sprintf(", exit code %d", *e.exitCode)
	}
	if e.detail != "" {
		s += ", " + e.detail
	}
	return s
}

// stopped is the outcome of a run that the operator stopped, or saw stopped, for reason
// (stopRules), keeping what its pod said.
func stopped(reason v1alpha1.StopReason, pod ended) ended {
	rule := ruleOf(reason)
	return ended{result: rule.result, finishedAt: pod.finishedAt, exitCode: pod.exitCode, reason: string(reason), detail: rule.detail}
}

// endedPod reads the outcome of a terminated pod: its phase as judged by spec.exitCodes, and the
// exit code and reason of the first terminated container that explains it (for a failure, the
// first that exited non-zero). The run ended when its last container did, or now when no
// container says so.
func (d *decision) endedPod(pod *corev1.Pod) ended {
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	out := ended{result: v1alpha1.ResultFailed}
	if pod.Status.Phase == corev1.PodSucceeded {
		out.result = v1alpha1.ResultSucceeded
	} else if success, doNotRetry := d.policy.classify(nonZeroExitCodes(statuses)); success {
		out.result = v1alpha1.ResultSucceeded
	} else {
		out.doNotRetry = doNotRetry
	}
	var first, firstFailed *corev1.ContainerStateTerminated
	for i := range statuses {
		term := statuses[i].State.Terminated
		if term == nil {
			continue
		}
		if first == nil {
			first = term
		}
		if firstFailed == nil && term.ExitCode != 0 {
			firstFailed = term
		}
	}
	explaining := first
	if pod.Status.Phase != corev1.PodSucceeded && firstFailed != nil {
		explaining = firstFailed
	}
	if explaining != nil {
		code := explaining.ExitCode
		out.exitCode = &code
		out.reason = explaining.Reason
	}
	if out.reason == "" {
		out.reason = pod.Status.Reason
	}
	if out.reason == "" {
		out.reason = string(pod.Status.Phase)
	}
	out.detail = pod.Status.Message
	out.finishedAt = d.stamp
	if end, ok := podbuild.Ended(pod); ok {
		out.finishedAt = metav1.NewTime(end.Truncate(time.Second))
	}
	return out
}
