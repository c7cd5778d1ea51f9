package forecast

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// ConditionOptions bound the forecast behind condition AtRisk: a day ahead, at most four passes
// per item (two per run, and wake-ups between) and 64 more, ended as soon as every deadline it
// judges is known.
func ConditionOptions(items int) Options {
	return Options{Horizon: 24 * time.Hour, MaxPasses: 4*items + 64, DefaultRun: DefaultRun, UntilAssessed: true}
}

// shownRisks is how many missed deadlines the condition's message names.
const shownRisks = 3

// AtRisk is condition AtRisk forecast from in and the first plan Decide made from it. A forecast
// cut short by its pass limit says so in the message: the deadlines after the instant it reached
// are not judged.
func AtRisk(in planner.Input, first planner.Plan) metav1.Condition {
	return conditionOf(in.Group, Simulate(in, first, ConditionOptions(len(first.Status.Items))), in.Now)
}

// conditionOf is condition AtRisk of the group's forecast f, made at now.
func conditionOf(group *v1alpha1.OaatGroup, f Forecast, now time.Time) metav1.Condition {
	c := Condition(Assess(group, f), group.Generation, now)
	if f.Stop == StopPassLimit {
		c.Message = message.Condition(fmt.Sprintf("%s; the forecast stopped after %d passes at %s: later deadlines are not judged",
			c.Message, f.Passes, stamp(f.ReachedAt)))
	}
	return c
}

// Due reports whether condition AtRisk must be forecast again after the pass that made plan
// from in: the condition is missing or of an earlier generation, a new round starts, a run ended
// otherwise than the last forecast assumed (longer than its item's expected time, or the item's
// first failure or interruption since its last success), or the run closes a cycle of as many
// runs as the group has items. While every run goes as assumed, the forecast made a cycle ago
// still holds: forecasting once a cycle instead of at every run's end spreads a forecast's cost
// (a replay plays about two passes of Decide per item) over the cycle's runs (docs/forecast.md,
// "Cost").
func Due(in planner.Input, plan *planner.Plan) bool {
	st := &plan.Status
	prev := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionAtRisk)
	switch {
	case prev == nil || prev.ObservedGeneration != in.Group.Generation:
		return true
	case !sameTime(st.RoundStartedAt, in.Group.Status.RoundStartedAt):
		return true
	}
	for _, o := range plan.Finished {
		before := itemStatus(in.Group.Status.Items, o.Item)
		switch {
		case o.Result == v1alpha1.ResultSucceeded && o.Duration > expectedRun(in.Group.Status.Items, before):
			return true
		case o.Result != v1alpha1.ResultSucceeded && before.FailureCount == 0:
			return true // its first failure: a failing group does not pay a forecast per failed run
		}
		if n := int64(max(len(st.Items), 1)); in.Group.Status.RunCount%n == 0 {
			return true
		}
	}
	return false
}

// expectedRun is the run time a forecast of the group whose items' status is items assumed for
// the item whose status is it (runAssumption, with the DefaultRun of ConditionOptions), with a
// second more: status keeps whole seconds, and a run within the second of its expectation went
// as assumed.
func expectedRun(items []v1alpha1.ItemStatus, it v1alpha1.ItemStatus) time.Duration {
	return assumeRuns(items, DefaultRun).of(it).Run + time.Second
}

// itemStatus is the status entry of item, empty when there is none.
func itemStatus(items []v1alpha1.ItemStatus, item string) v1alpha1.ItemStatus {
	for _, it := range items {
		if it.Name == item {
			return it
		}
	}
	return v1alpha1.ItemStatus{Name: item}
}

func sameTime(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

// Condition is condition AtRisk for the risks found.
func Condition(risks []Risk, generation int64, now time.Time) metav1.Condition {
	c := metav1.Condition{
		Type: v1alpha1.ConditionAtRisk, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonOnTime),
		Message:            "Every deadline the forecast reaches is met, if every run succeeds in its expected time",
		ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now.Truncate(time.Second)),
	}
	if len(risks) == 0 {
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, string(risks[0].Reason)
	described := make([]string, 0, shownRisks)
	for _, r := range risks[:min(len(risks), shownRisks)] {
		described = append(described, r.String())
	}
	text := strings.Join(described, "; ")
	if more := len(risks) - shownRisks; more > 0 {
		text += fmt.Sprintf("; and %d more", more)
	}
	c.Message = message.Condition(text)
	return c
}

// String says what deadline is missed and by how much.
func (r Risk) String() string {
	predicted := "none predicted before then"
	if !r.Predicted.IsZero() {
		predicted = "predicted " + stamp(r.Predicted)
	}
	switch r.Reason {
	case v1alpha1.ReasonItemLate:
		return fmt.Sprintf("item %q goes overdue at %s, its next success %s", r.Item, stamp(r.Deadline), predicted)
	case v1alpha1.ReasonRoundLate:
		return fmt.Sprintf("the round ends after the next tick at %s: %s", stamp(r.Deadline), predicted)
	default:
		return fmt.Sprintf("the round waits for a blackout window from %s: its end %s", stamp(r.Deadline), predicted)
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
