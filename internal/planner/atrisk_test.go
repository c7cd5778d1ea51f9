package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestSetAtRisk: the condition the forecaster made is written when it is of the group's
// generation, and written again as it is (its transition time kept) while it says the same; one
// of an earlier generation leaves the condition in status as it was.
func TestSetAtRisk(t *testing.T) {
	onTime := cond(v1alpha1.ConditionAtRisk, metav1.ConditionFalse, v1alpha1.ReasonOnTime, "on time", -time.Hour)
	late := cond(v1alpha1.ConditionAtRisk, metav1.ConditionTrue, v1alpha1.ReasonItemLate, "item a late", 0)
	for _, tc := range []struct {
		name   string
		status *metav1.Condition
		made   *metav1.Condition
		want   *metav1.Condition
	}{
		{name: "none made, none in status"},
		{name: "none made yet: the condition stays", status: &onTime, want: &onTime},
		{name: "the first made", made: &late, want: &late},
		{name: "a change made", status: &onTime, made: &late, want: &late},
		{name: "the same made again: its transition time kept", status: &onTime, made: withTime(onTime, time.Minute), want: &onTime},
		{name: "made for an earlier generation: the condition stays", status: &onTime, made: withGeneration(late, 0), want: &onTime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup("a")
			if tc.status != nil {
				g.Status.Conditions = []metav1.Condition{*tc.status}
			}
			in := input(g, 0)
			in.AtRisk = tc.made
			got := meta.FindStatusCondition(Decide(in).Status.Conditions, v1alpha1.ConditionAtRisk)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("condition AtRisk (-want +got):\n%s", diff)
			}
		})
	}
}

func withTime(c metav1.Condition, since time.Duration) *metav1.Condition {
	c.LastTransitionTime = *at(since)
	return &c
}

func withGeneration(c metav1.Condition, generation int64) *metav1.Condition {
	c.ObservedGeneration = generation
	return &c
}
