package forecast

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestAssess(t *testing.T) {
	for _, tc := range []struct {
		name  string
		group func() *v1alpha1.OaatGroup
		opts  Options
		want  []Risk
	}{{
		name: "every item succeeds before three frequencies after its last success",
		group: func() *v1alpha1.OaatGroup {
			return group(item{"a", ago(2 * time.Hour), 10 * time.Minute}, item{"b", ago(90 * time.Minute), 10 * time.Minute})
		},
		opts: ConditionOptions(2),
	}, {
		name: "items whose runs together outlast three frequencies: those that would wait past it are late",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(40 * time.Minute), 20 * time.Minute}, item{"b", ago(30 * time.Minute), 20 * time.Minute},
				item{"c", ago(20 * time.Minute), 20 * time.Minute})
			g.Spec.Frequency = "10m"
			return g
		},
		opts: ConditionOptions(3),
		want: []Risk{
			// a runs 12:00-12:20 (deadline 11:50), b 12:20-12:40 (deadline 12:00), c 12:40-13:00 (12:10)
			{Reason: v1alpha1.ReasonItemLate, Item: "a", Deadline: at(-10 * time.Minute), Predicted: at(20 * time.Minute)},
			{Reason: v1alpha1.ReasonItemLate, Item: "b", Deadline: at(0), Predicted: at(40 * time.Minute)},
			{Reason: v1alpha1.ReasonItemLate, Item: "c", Deadline: at(10 * time.Minute), Predicted: at(time.Hour)},
		},
	}, {
		name: "a suspended group: items whose deadline falls within the horizon are late, with no success predicted",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(2 * time.Hour), time.Minute}, item{"b", ago(30 * time.Minute), time.Minute})
			g.Spec.Suspend = true
			return g
		},
		opts: Options{Horizon: 2 * time.Hour, MaxPasses: 100, UntilAssessed: true},
		want: []Risk{{Reason: v1alpha1.ReasonItemLate, Item: "a", Deadline: at(time.Hour)}},
	}, {
		name: "the pass limit leaves later deadlines unjudged",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(3 * time.Hour), time.Hour}, item{"b", ago(2 * time.Hour), time.Hour})
			return g
		},
		opts: Options{Horizon: 24 * time.Hour, MaxPasses: 1, UntilAssessed: true},
	}, {
		name: "a scheduled round that ends after the next tick",
		group: func() *v1alpha1.OaatGroup {
			return hourly(item{"a", ago(time.Hour), 25 * time.Minute}, item{"b", ago(50 * time.Minute), 25 * time.Minute}, item{"c", ago(40 * time.Minute), 25 * time.Minute})
		},
		opts: ConditionOptions(3),
		want: []Risk{{Reason: v1alpha1.ReasonRoundLate, Deadline: at(time.Hour)}},
	}, {
		name: "a scheduled round that ends before the next tick",
		group: func() *v1alpha1.OaatGroup {
			return hourly(item{"a", ago(time.Hour), 15 * time.Minute}, item{"b", ago(50 * time.Minute), 15 * time.Minute})
		},
		opts: ConditionOptions(2),
	}, {
		name: "a round whose last item waits for a blackout window",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(2 * time.Hour), 10 * time.Minute}, item{"b", ago(90 * time.Minute), 10 * time.Minute})
			g.Spec.Mode = v1alpha1.ModeEachOnce
			g.Status.RoundStartedAt = stampAt(-time.Minute)
			g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:05", End: "13:00"}}
			return g
		},
		opts: ConditionOptions(2),
		want: []Risk{{Reason: v1alpha1.ReasonRoundInBlackout, Deadline: at(10 * time.Minute), Predicted: at(70 * time.Minute)}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.group()
			got := Assess(g, Predict(input(g), tc.opts))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("risks (-want +got):\n%s", diff)
			}
		})
	}
}
