package planner

import (
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
