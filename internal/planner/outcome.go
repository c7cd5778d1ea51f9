package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

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
			finishedAt: d.stamp,
			reason:     v1alpha1.ReasonPodNotFound,
			detail:     "its pod no longer exists: deleted before it ended, or never created",
		}
	case terminal(pod):
		out = endedPod(pod, d.stamp)
	default:
		return
	}

	it := d.item(cr.Item)
	it.LastPodName = cr.PodName
	it.LastExitCode = out.exitCode
	it.LastReason = out.reason
	if out.succeeded {
		it.LastSuccess = &out.finishedAt
		it.FailureCount = 0
	} else {
		it.LastFailure = &out.finishedAt
		it.FailureCount++
	}
	d.plan.Status.CurrentRun = nil

	started := cr.StartedAt
	if pod != nil && pod.Status.StartTime != nil {
		started = *pod.Status.StartTime
	}
	d.plan.Finished = append(d.plan.Finished, Outcome{
		Item:      cr.Item,
		Succeeded: out.succeeded,
		Duration:  max(out.finishedAt.Sub(started.Time), 0),
	})
	if out.succeeded {
		d.event(corev1.EventTypeNormal, v1alpha1.ReasonRunSucceeded,
			fmt.Sprintf("Item %q succeeded in pod %s%s", cr.Item, cr.PodName, out.describe()))
	} else {
		d.event(corev1.EventTypeWarning, v1alpha1.ReasonRunFailed,
			fmt.Sprintf("Item %q failed in pod %s%s", cr.Item, cr.PodName, out.describe()))
	}
}

// ended is how a run ended.
type ended struct {
	succeeded  bool
	finishedAt metav1.Time
	exitCode   *int32
	reason     string
	detail     string
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

// endedPod reads the outcome of a terminated pod: its phase, and the exit code and reason of the
// first terminated container that explains it (for a failure, the first that exited non-zero).
// The run ended when its last container did; fallback is used when no container says so.
func endedPod(pod *corev1.Pod, fallback metav1.Time) ended {
	out := ended{succeeded: pod.Status.Phase == corev1.PodSucceeded}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
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
		if term.FinishedAt.After(out.finishedAt.Time) {
			out.finishedAt = metav1.NewTime(term.FinishedAt.Truncate(time.Second))
		}
	}
	explaining := first
	if !out.succeeded && firstFailed != nil {
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
	if out.finishedAt.IsZero() {
		out.finishedAt = fallback
	}
	return out
}
