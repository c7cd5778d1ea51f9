package planner

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestDecideNotReady(t *testing.T) {
	badType := newType()
	badType.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	tests := []struct {
		name    string
		mutate  func(*Input)
		reason  string
		message string
	}{
		{name: "missing OaatType", mutate: func(in *Input) { in.Type = nil }, reason: v1alpha1.ReasonOaatTypeNotFound, message: `OaatType "sleeper" not found in namespace ns`},
		{name: "bad frequency", mutate: func(in *Input) { in.Group.Spec.Frequency = "5x" }, reason: v1alpha1.ReasonInvalidSpec, message: "spec.frequency"},
		{name: "bad cool-off", mutate: func(in *Input) { in.Group.Spec.FailureCoolOff = "0s" }, reason: v1alpha1.ReasonInvalidSpec, message: "spec.failureCoolOff"},
		{name: "no items", mutate: func(in *Input) { in.Group.Spec.OaatItems = nil }, reason: v1alpha1.ReasonInvalidSpec, message: "spec.oaatItems is empty"},
		{name: "restartPolicy Always", mutate: func(in *Input) { in.Type = badType }, reason: v1alpha1.ReasonInvalidOaatType, message: "restartPolicy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(newGroup("a"), 0)
			tt.mutate(&in)
			p := Decide(in)
			c := condition(t, p, v1alpha1.ConditionReady)
			if c.Status != metav1.ConditionFalse || c.Reason != tt.reason || !strings.Contains(c.Message, tt.message) {
				t.Fatalf("Ready = %+v, want False %s mentioning %q", c, tt.reason, tt.message)
			}
			if p.Create != nil {
				t.Fatal("planned a pod for a group that is not ready")
			}
			if !slices.Equal(reasons(p), []string{tt.reason}) {
				t.Fatalf("events %v, want one %s", reasons(p), tt.reason)
			}
			if p.RequeueAfter != MinRetry {
				t.Fatalf("requeueAfter = %v, want %v", p.RequeueAfter, MinRetry)
			}

			// Later passes stay quiet and back off further.
			later := in
			later.Group = applied(in.Group, p)
			later.Now = t0.Add(time.Minute)
			again := Decide(later)
			if len(again.Events) != 0 || again.RequeueAfter != time.Minute {
				t.Fatalf("second pass: events %v, requeueAfter %v; want none, 1m", reasons(again), again.RequeueAfter)
			}
			later.Now = t0.Add(time.Hour)
			if again = Decide(later); again.RequeueAfter != maxRetry {
				t.Fatalf("requeueAfter after an hour = %v, want %v", again.RequeueAfter, maxRetry)
			}
		})
	}
}

func TestDecideRecoversWhenOaatTypeAppears(t *testing.T) {
	g := newGroup("a")
	in := input(g, 0)
	in.Type = nil
	p := Decide(in)
	p = Decide(input(applied(g, p), time.Minute))
	if c := condition(t, p, v1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
	if p.Create == nil {
		t.Fatal("no run once the OaatType exists")
	}
	if !slices.Equal(reasons(p), []string{v1alpha1.ReasonReady}) {
		t.Fatalf("events %v", reasons(p))
	}
}

func TestPodCreateFailedBacksOff(t *testing.T) {
	g := newGroup("a")
	p := Decide(input(g, 0))
	g = applied(g, p)
	event := setPodCreateFailed(&g.Status, t0, errors.New("quota exceeded"))
	if event.Reason != v1alpha1.ReasonPodCreateFailed || !strings.Contains(event.Message, "quota exceeded") || g.Status.CurrentRun != nil {
		t.Fatalf("event %+v, currentRun %+v", event, g.Status.CurrentRun)
	}

	// Within the wait: nothing starts.
	p = Decide(input(g, 2*time.Second))
	if p.Create != nil || p.RequeueAfter != 3*time.Second {
		t.Fatalf("at +2s: create %v, requeueAfter %v; want none, 3s", p.Create != nil, p.RequeueAfter)
	}
	// At the retry time a new attempt starts; Ready stays False until its pod is seen.
	p = Decide(input(g, 5*time.Second))
	if p.Create == nil {
		t.Fatal("no retry at +5s")
	}
	if c := condition(t, p, v1alpha1.ConditionReady); c.Reason != v1alpha1.ReasonPodCreateFailed {
		t.Fatalf("Ready during the retry = %+v", c)
	}
	// It fails again: the next wait is longer (10s since the first failure, so 10s after +5s).
	g = applied(g, p)
	setPodCreateFailed(&g.Status, t0.Add(5*time.Second), errors.New("quota exceeded"))
	if p = Decide(input(g, 6*time.Second)); p.Create != nil || p.RequeueAfter != 4*time.Second {
		t.Fatalf("second wait: create %v, requeueAfter %v; want none, 4s", p.Create != nil, p.RequeueAfter)
	}
	// The third attempt's pod exists: Ready again.
	p = Decide(input(g, 10*time.Second))
	g = applied(g, p)
	pod := *p.Create
	pod.Status.Phase = corev1.PodPending
	p = Decide(input(g, 11*time.Second, pod))
	if c := condition(t, p, v1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready once a pod exists = %+v", c)
	}
}
