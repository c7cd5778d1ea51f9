package planner

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestStopRulesCoverEveryStopReason walks every stop reason (v1alpha1.StopReasons, which the API
// package's test holds to the declared constants) through stopRules: each has its own row, counts
// as a known result, records a detail, and, when the operator deletes the pod, announces it with
// an event that names the item and the pod.
func TestStopRulesCoverEveryStopReason(t *testing.T) {
	g := newGroup("a")
	g.Spec.RunTimeout, g.Spec.PendingTimeout = "5m", "2m"
	d := newDecision(Input{Group: g})
	cr := &v1alpha1.CurrentRun{Item: "a", PodName: "g-a-1"}
	pod := &corev1.Pod{}
	for _, reason := range v1alpha1.StopReasons() {
		rule, ok := stopRules[reason]
		if !ok {
			t.Errorf("stop reason %q has no row in stopRules", reason)
			continue
		}
		if !slices.Contains(v1alpha1.RunResults(), rule.result) {
			t.Errorf("stop reason %q: result %q is not a v1alpha1.RunResult", reason, rule.result)
		}
		if rule.detail == "" {
			t.Errorf("stop reason %q: no detail for the run's outcome", reason)
		}
		out := stopped(reason, ended{result: v1alpha1.ResultFailed, finishedAt: metav1.Unix(60, 0)})
		if out.result != rule.result || out.reason != string(reason) || out.detail != rule.detail {
			t.Errorf("stop reason %q: stopped gives %+v, want result %q, reason %q, detail %q", reason, out, rule.result, reason, rule.detail)
		}
		if !rule.deletes {
			if rule.announce != nil || rule.eventType != "" {
				t.Errorf("stop reason %q: the operator does not delete the pod, yet its row has an event", reason)
			}
			continue
		}
		if rule.eventType != corev1.EventTypeNormal && rule.eventType != corev1.EventTypeWarning {
			t.Errorf("stop reason %q: event type %q", reason, rule.eventType)
		}
		cr.StopReason = reason
		e := d.stopEvent(cr, pod)
		if e.Reason != v1alpha1.ReasonRunStopping || e.Type != rule.eventType || e.Message == "" {
			t.Errorf("stop reason %q: event %+v", reason, e)
		}
	}
	// A reason of a later version (no row) stops the run as a failure, announced with the reason.
	cr.StopReason = "Preempted"
	if e := d.stopEvent(cr, pod); e.Type != corev1.EventTypeWarning || e.Message != `Stopping item "a" in pod g-a-1: Preempted` {
		t.Errorf("unknown stop reason: event %+v", e)
	}
	if out := stopped("Preempted", ended{}); out.result != v1alpha1.ResultFailed || out.reason != "Preempted" {
		t.Errorf("unknown stop reason: outcome %+v", out)
	}
}

// TestOutcomeEventsCoverEveryResult walks every run result (v1alpha1.RunResults) through
// outcomeEvents: each has its own event reason and a type.
func TestOutcomeEventsCoverEveryResult(t *testing.T) {
	want := map[v1alpha1.RunResult]Event{
		v1alpha1.ResultSucceeded:   {Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunSucceeded, Message: `Item "a" succeeded in pod g-a-1: Completed`},
		v1alpha1.ResultFailed:      {Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed, Message: `Item "a" failed in pod g-a-1: Completed`},
		v1alpha1.ResultInterrupted: {Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunInterrupted, Message: `Item "a" was interrupted in pod g-a-1: Completed`},
	}
	for _, result := range v1alpha1.RunResults() {
		if _, ok := outcomeEvents[result]; !ok {
			t.Errorf("result %q has no row in outcomeEvents", result)
			continue
		}
		d := newDecision(Input{Group: newGroup("a")})
		d.announceOutcome(&v1alpha1.CurrentRun{Item: "a", PodName: "g-a-1"}, ended{result: result, reason: "Completed"})
		if len(d.plan.Events) != 1 || d.plan.Events[0] != want[result] {
			t.Errorf("result %q: events %+v, want %+v", result, d.plan.Events, want[result])
		}
	}
}
