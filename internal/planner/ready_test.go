package planner

import (
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
		reason  v1alpha1.Reason
		message string
	}{
		{name: "missing OaatType", mutate: func(in *Input) { in.Type = nil }, reason: v1alpha1.ReasonOaatTypeNotFound, message: `OaatType "sleeper" not found in namespace ns`},
		{name: "bad frequency", mutate: func(in *Input) { in.Group.Spec.Frequency = "5x" }, reason: v1alpha1.ReasonInvalidSpec,
			message: `spec.frequency: invalid duration "5x": unknown unit "x": use s, m, h, d or w, or a long form such as sec, min, hours, days or weeks`},
		{name: "bad cool-off", mutate: func(in *Input) { in.Group.Spec.FailureCoolOff = "0s" }, reason: v1alpha1.ReasonInvalidSpec,
			message: `spec.failureCoolOff: invalid duration "0s": it is zero, a duration must be positive`},
		{name: "no items", mutate: func(in *Input) { in.Group.Spec.OaatItems = nil }, reason: v1alpha1.ReasonInvalidSpec,
			message: "the group has no items: spec.oaatItems is empty and spec.oaatItemsFrom gives none"},
		{name: "restartPolicy Always", mutate: func(in *Input) { in.Type = badType }, reason: v1alpha1.ReasonInvalidOaatType,
			message: `OaatType sleeper: spec.template.spec.restartPolicy "Always" is not allowed: an item run ends when its pod ends, so it must be Never or unset`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(newGroup("a"), 0)
			tt.mutate(&in)
			// No pod; one event; a retry after MinRetry.
			p := Decide(in)
			var items []v1alpha1.ItemStatus
			for _, item := range in.Group.Spec.OaatItems {
				items = append(items, v1alpha1.ItemStatus{Name: item})
			}
			checkPlan(t, Plan{
				Status: v1alpha1.OaatGroupStatus{
					ObservedGeneration: 1,
					Conditions:         []metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse, tt.reason, tt.message, 0), idleCond(0)},
					ItemCount:          int32(len(items)), Items: items,
				},
				Events:       []Event{{Type: corev1.EventTypeWarning, Reason: tt.reason, Message: tt.message}},
				RequeueAfter: MinRetry,
			}, p)

			// Later passes stay quiet and back off further.
			later := in
			later.Group = applied(in.Group, p)
			for _, after := range []struct{ now, wait time.Duration }{{time.Minute, time.Minute}, {time.Hour, maxRetry}} {
				later.Now = t0.Add(after.now)
				checkPlan(t, Plan{Status: later.Group.Status, RequeueAfter: after.wait}, Decide(later))
			}
		})
	}
}

func TestDecideRecoversWhenOaatTypeAppears(t *testing.T) {
	g := newGroup("a")
	in := input(g, 0)
	in.Type = nil
	p := Decide(in)
	// Ready again, said by an event, and the run starts.
	checkPlan(t, Plan{
		Status: runningStatus(g, "a", 1, time.Minute, time.Minute),
		Events: []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonReady, Message: "Group is ready: OaatType sleeper found, 1 items"}},
		Create: newPod(t, g, "a", 1),
	}, Decide(input(applied(g, p), time.Minute)))
}
