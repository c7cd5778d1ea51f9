package planner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// The withdrawal of a refused run is decided from the plan alone: its status without the intent,
// stamped with the decision's time (not the time it is applied), Ready False with the refusal, and
// the plan itself unchanged.
func TestWithdrawRun(t *testing.T) {
	p := Decide(input(newGroup("a"), 1500*time.Millisecond))
	planned := *p.Status.DeepCopy()
	cr := planned.CurrentRun
	got := p.WithdrawRun(errors.New("exceeded quota"))

	text := `Creating pod ` + cr.PodName + ` for item "a" failed: exceeded quota`
	want := *planned.DeepCopy()
	want.CurrentRun = nil
	want.Conditions = []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: 1, LastTransitionTime: *at(time.Second),
			Reason: string(v1alpha1.ReasonPodCreateFailed), Message: text},
		{Type: v1alpha1.ConditionRunning, Status: metav1.ConditionFalse, ObservedGeneration: 1, LastTransitionTime: *at(time.Second),
			Reason: string(v1alpha1.ReasonIdle), Message: "No item pod is active"},
	}
	checkFallback(t, Fallback{Status: want, RequeueAfter: MinRetry,
		Event: &Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonPodCreateFailed, Message: text}}, got)
	if diff := cmp.Diff(planned, p.Status); diff != "" {
		t.Errorf("the plan's status changed (-before +after):\n%s", diff)
	}
}

// After an unclear pod-create error the run is kept: the status is the plan's, written already
// (no event: nothing to write again), and the pod is looked for after MinRetry.
func TestKeepRun(t *testing.T) {
	g := newGroup("a")
	p := Decide(input(g, 0))
	if p.Status.CurrentRun == nil || p.Status.CurrentRun.PodName != podName(g, "a", 1) {
		t.Fatalf("currentRun %+v, want the run of pod %s", p.Status.CurrentRun, podName(g, "a", 1))
	}
	checkFallback(t, Fallback{Status: p.Status, RequeueAfter: MinRetry}, p.KeepRun())
}

// A rejected status is reported in the status as last written, stamped with the decision's time;
// the planned status and the written one are left as they are.
func TestStatusRejected(t *testing.T) {
	g := newGroup("a")
	written := Decide(input(g, 0)).Status
	before := *written.DeepCopy()
	p := Decide(input(applied(g, Plan{Status: written}), time.Minute+500*time.Millisecond))
	planned := *p.Status.DeepCopy()

	// Ready is StatusRejected since the decision's time; all else is the written status.
	text := "The API server refused the group's new status; nothing starts until it can be written: status.items: Too many"
	want := *before.DeepCopy()
	want.Conditions[0] = cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonStatusRejected, text, time.Minute)
	checkFallback(t, Fallback{Status: want, RequeueAfter: MinRetry,
		Event: &Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonStatusRejected, Message: text}},
		p.StatusRejected(written, errors.New("status.items: Too many")))
	if diff := cmp.Diff(before, written); diff != "" {
		t.Errorf("the written status changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(planned, p.Status); diff != "" {
		t.Errorf("the plan's status changed (-before +after):\n%s", diff)
	}
}

func TestSetStatusRejected(t *testing.T) {
	g := newGroup("a")
	written := Decide(input(g, 0)).Status // Ready True, as last written
	refusal := errors.New(strings.Repeat("status.conditions[0].message: Too long ", 1000))

	status := *written.DeepCopy()
	event, wait := setStatusRejected(&status, t0.Add(time.Minute), refusal)
	ready := findReady(t, status)
	if event == nil || event.Reason != v1alpha1.ReasonStatusRejected || len(event.Message) > message.MaxEvent {
		t.Fatalf("event %+v", event)
	}
	if ready.Status != metav1.ConditionFalse || ready.Reason != string(v1alpha1.ReasonStatusRejected) || len(ready.Message) > message.MaxCondition ||
		!ready.LastTransitionTime.Equal(at(time.Minute)) {
		t.Fatalf("Ready = %+v", ready)
	}
	if wait != MinRetry {
		t.Fatalf("first wait %v, want %v", wait, MinRetry)
	}

	// Refused again later: nothing to write or report, and the wait has grown.
	again := *status.DeepCopy()
	event, wait = setStatusRejected(&again, t0.Add(11*time.Minute), refusal)
	if event != nil || findReady(t, again).Message != ready.Message || wait != maxRetry {
		t.Fatalf("again: event %+v, wait %v", event, wait)
	}
	event, wait = setStatusRejected(&again, t0.Add(time.Minute+30*time.Second), refusal)
	if event != nil || wait != 30*time.Second {
		t.Fatalf("after 30s: event %+v, wait %v", event, wait)
	}
}

// checkFallback fails the test with the difference between the whole fallback wanted and got.
func checkFallback(t *testing.T, want, got Fallback) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("fallback (-want +got):\n%s", diff)
	}
}

func findReady(t *testing.T, status v1alpha1.OaatGroupStatus) metav1.Condition {
	t.Helper()
	return condition(t, Plan{Status: status}, v1alpha1.ConditionReady)
}
