package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// stopCurrentRun stops the current run once it has run longer than spec.runTimeout (Pending
// time included), its pod has waited longer than spec.pendingTimeout for a container to start, or
// a blackout window with stopRunning is open, and otherwise returns when the first of these
// happens, to be woken then (zero when none will). The reason is written into status
// before the pod is deleted, so that the run is recorded with it once the pod is gone, whichever
// pass sees that.
func (d *decision) stopCurrentRun() (wake time.Time) {
	cr := d.plan.Status.CurrentRun
	if cr == nil {
		return time.Time{}
	}
	pod := d.pods.current
	if cr.StopReason == "" && pod != nil && !podbuild.Terminal(pod) && podbuild.Disrupted(pod) {
		// Recorded while the pod still ends, so that the outcome does not depend on seeing its
		// last state: an evicted pod may be gone before the next pass (PodNotFound).
		cr.StopReason = v1alpha1.StopDisrupted
	}
	// The stop is announced in the pass that decides it, with the status that records its reason;
	// a later pass that still sees the pod undeleted (its cache behind the deletion, or the
	// deletion failed) deletes it again without a second event.
	decided := cr.StopReason == ""
	if decided {
		cr.StopReason, wake = d.stopReason(cr)
	}
	if cr.StopReason == "" || !ruleOf(cr.StopReason).deletes || pod == nil || podbuild.Terminal(pod) || pod.DeletionTimestamp != nil {
		return wake
	}
	deletion := Deletion{Pod: pod}
	if decided {
		deletion.Event = d.stopEvent(cr, pod)
	}
	d.plan.Delete = append(d.plan.Delete, deletion)
	return wake
}

// stopRule is what a stop reason means: how the stopped run counts, whether the operator deletes
// its pod (announcing it with a RunStopping event of eventType and the message announce makes),
// and the detail its outcome records.
type stopRule struct {
	result v1alpha1.RunResult
	// deletes says that the operator deletes the run's pod; a disrupted pod is ended by whoever
	// disrupts it (the eviction API, the scheduler, the taint manager), the operator only records
	// it.
	deletes   bool
	eventType string
	announce  func(d *decision, cr *v1alpha1.CurrentRun, pod *corev1.Pod) string
	detail    string
}

// stopRules are the meanings of the stop reasons, one row each (exhaustive checks that every
// v1alpha1.StopReason has one).
var stopRules = map[v1alpha1.StopReason]stopRule{
	v1alpha1.StopDeadlineExceeded: {
		result: v1alpha1.ResultFailed, deletes: true, eventType: corev1.EventTypeWarning,
		announce: func(d *decision, cr *v1alpha1.CurrentRun, _ *corev1.Pod) string {
			return fmt.Sprintf("Stopping item %q in pod %s: it ran longer than %s", cr.Item, cr.PodName, d.runTimeoutText(cr.Item))
		},
		detail: "stopped after running longer than its run timeout",
	},
	v1alpha1.StopPendingTimeout: {
		result: v1alpha1.ResultFailed, deletes: true, eventType: corev1.EventTypeWarning,
		announce: func(d *decision, cr *v1alpha1.CurrentRun, pod *corev1.Pod) string {
			return fmt.Sprintf("Stopping item %q in pod %s: no container started within spec.pendingTimeout %s (%s)",
				cr.Item, cr.PodName, d.group.Spec.PendingTimeout, waitingFor(pod))
		},
		detail: "stopped because no container of its pod started within spec.pendingTimeout",
	},
	v1alpha1.StopInterrupted: {
		result: v1alpha1.ResultInterrupted, deletes: true, eventType: corev1.EventTypeNormal,
		announce: func(_ *decision, cr *v1alpha1.CurrentRun, _ *corev1.Pod) string {
			return fmt.Sprintf("Stopping item %q in pod %s: a blackout window with stopRunning opened", cr.Item, cr.PodName)
		},
		detail: "stopped because a blackout window with stopRunning opened",
	},
	v1alpha1.StopDisrupted: {
		result: v1alpha1.ResultInterrupted,
		detail: "its pod was ended by a disruption (an eviction, a drain, a preemption or a node's loss), not by its item",
	},
}

// ruleOf returns the meaning of a stop reason. A reason without a row (a status written by a
// later version of the operator) stops the run as a failure, announced with the reason alone.
func ruleOf(reason v1alpha1.StopReason) stopRule {
	if rule, ok := stopRules[reason]; ok {
		return rule
	}
	return stopRule{
		result: v1alpha1.ResultFailed, deletes: true, eventType: corev1.EventTypeWarning,
		announce: func(_ *decision, cr *v1alpha1.CurrentRun, _ *corev1.Pod) string {
			return fmt.Sprintf("Stopping item %q in pod %s: %s", cr.Item, cr.PodName, reason)
		},
	}
}

// stopEvent is the RunStopping event that announces the stop of the current run, for its reason.
func (d *decision) stopEvent(cr *v1alpha1.CurrentRun, pod *corev1.Pod) *Event {
	rule := ruleOf(cr.StopReason)
	return &Event{Type: rule.eventType, Reason: v1alpha1.ReasonRunStopping, Message: message.Event(rule.announce(d, cr, pod))}
}

// stopReason returns why the current run must stop now, or else the earliest instant at which it
// will have to (zero when it will not).
func (d *decision) stopReason(cr *v1alpha1.CurrentRun) (reason v1alpha1.StopReason, wake time.Time) {
	var next wakeUp
	if timeout := d.runTimeout(cr.Item); timeout > 0 {
		deadline := cr.StartedAt.Add(timeout)
		if !d.in.Now.Before(deadline) {
			return v1alpha1.StopDeadlineExceeded, time.Time{}
		}
		next.at(deadline)
	}
	if timeout := d.policy.PendingTimeout; timeout > 0 && !podbuild.Started(d.pods.current) {
		deadline := cr.StartedAt.Add(timeout)
		if !d.in.Now.Before(deadline) {
			return v1alpha1.StopPendingTimeout, time.Time{}
		}
		next.at(deadline)
	}
	windows := d.policy.Timing.Windows
	if onDemandRun := d.onDemandRun(cr.OaatRun); cr.OaatRun != "" && onDemandRun != nil && onDemandRun.Spec.IgnoreBlackoutWindows {
		windows = nil
	}
	for _, w := range windows {
		if _, open := w.Covering(d.in.Now); open && w.StopRunning {
			return v1alpha1.StopInterrupted, next.earliest
		}
	}
	if opens, ok := windows.NextStopAfter(d.in.Now); ok {
		next.at(opens)
	}
	return "", next.earliest
}

// runTimeout is the bound of the item's runs: its learned timeout with spec.learnedRunTimeout
// (from its kept durations, which do not change while it runs), else spec.runTimeout; zero for
// no bound.
func (d *decision) runTimeout(item string) time.Duration {
	return d.policy.RunTimeoutOf(groupspec.RecentRunSeconds(d.plan.Status.Items, item))
}

// runTimeoutText names the bound of the item's runs for an event.
func (d *decision) runTimeoutText(item string) string {
	l := d.policy.Learned
	if l == nil {
		return fmt.Sprintf("spec.runTimeout %s", d.group.Spec.RunTimeout)
	}
	recent := groupspec.RecentRunSeconds(d.plan.Status.Items, item)
	if len(recent) == 0 {
		return fmt.Sprintf("its learned timeout %s (spec.learnedRunTimeout.max: it has no kept run)", d.runTimeout(item))
	}
	return fmt.Sprintf("its learned timeout %s (spec.learnedRunTimeout: %d times the longest of its %d kept runs, within %s and %s)",
		d.runTimeout(item), l.Factor, len(recent), l.Min, l.Max)
}
