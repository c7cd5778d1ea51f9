package forecast

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

func TestCondition(t *testing.T) {
	late := func(item string, deadline, predicted time.Duration) Risk {
		return Risk{Reason: v1alpha1.ReasonItemLate, Item: item, Deadline: at(deadline), Predicted: at(predicted)}
	}
	for _, tc := range []struct {
		name  string
		risks []Risk
		want  metav1.Condition
	}{{
		name: "no risk",
		want: metav1.Condition{Type: v1alpha1.ConditionAtRisk, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonOnTime),
			Message:            "Every deadline the forecast reaches is met, if every run succeeds in its expected time",
			ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(t0)},
	}, {
		name:  "the earliest deadline gives the reason; three are named, the rest counted",
		risks: []Risk{{Reason: v1alpha1.ReasonRoundLate, Deadline: at(time.Hour)}, late("a", 2*time.Hour, 3*time.Hour), late("b", 3*time.Hour, 4*time.Hour), late("c", 4*time.Hour, 5*time.Hour)},
		want: metav1.Condition{Type: v1alpha1.ConditionAtRisk, Status: metav1.ConditionTrue, Reason: string(v1alpha1.ReasonRoundLate),
			Message: "the round ends after the next tick at 2026-11-21T13:00:00Z: none predicted before then; " +
				`item "a" goes overdue at 2026-11-21T14:00:00Z, its next success predicted 2026-11-21T15:00:00Z; ` +
				`item "b" goes overdue at 2026-11-21T15:00:00Z, its next success predicted 2026-11-21T16:00:00Z; and 1 more`,
			ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(t0)},
	}, {
		name:  "a round waiting for a blackout window",
		risks: []Risk{{Reason: v1alpha1.ReasonRoundInBlackout, Deadline: at(10 * time.Minute), Predicted: at(70 * time.Minute)}},
		want: metav1.Condition{Type: v1alpha1.ConditionAtRisk, Status: metav1.ConditionTrue, Reason: string(v1alpha1.ReasonRoundInBlackout),
			Message:            "the round waits for a blackout window from 2026-11-21T12:10:00Z: its end predicted 2026-11-21T13:10:00Z",
			ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(t0)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Condition(tc.risks, 3, t0.Add(300*time.Millisecond))); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDue(t *testing.T) {
	// a runs a minute, b two; the group's status says the run numbered runCount ended.
	base := func(runCount int64, conditions ...metav1.Condition) func() *v1alpha1.OaatGroup {
		return func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(2 * time.Hour), time.Minute}, item{"b", ago(90 * time.Minute), 2 * time.Minute})
			g.Status.RunCount = runCount
			g.Status.Conditions = conditions
			return g
		}
	}
	stale := metav1.Condition{Type: v1alpha1.ConditionAtRisk, Status: metav1.ConditionTrue, Reason: string(v1alpha1.ReasonItemLate),
		Message: "stale", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(at(-time.Hour))}
	// c never ran: it is expected to take the median of a's and b's runs, 90 s.
	withNewItem := func() *v1alpha1.OaatGroup {
		g := group(item{"a", ago(2 * time.Hour), time.Minute}, item{"b", ago(90 * time.Minute), 2 * time.Minute}, item{"c", nil, 0})
		g.Status.RunCount, g.Status.Conditions = 1, []metav1.Condition{stale}
		return g
	}
	neverRan := func() *v1alpha1.OaatGroup {
		g := group(item{"a", nil, 0}, item{"b", nil, 0})
		g.Status.RunCount, g.Status.Conditions = 1, []metav1.Condition{stale}
		return g
	}
	succeeded := func(item string, d time.Duration) []planner.Outcome {
		return []planner.Outcome{{Item: item, Result: v1alpha1.ResultSucceeded, Duration: d}}
	}
	for _, tc := range []struct {
		name     string
		group    func() *v1alpha1.OaatGroup
		finished []planner.Outcome
		wantDue  bool
	}{{
		name:  "no condition yet",
		group: base(1), wantDue: true,
	}, {
		name: "the condition of an earlier generation",
		group: func() *v1alpha1.OaatGroup {
			g := base(1, stale)()
			g.Generation = 2
			return g
		},
		wantDue: true,
	}, {
		name: "no run ended", group: base(1, stale),
	}, {
		name: "a run ended in its expected time, not closing a cycle", group: base(1, stale),
		finished: succeeded("b", 2*time.Minute),
	}, {
		name: "a run ended within the second after its expected time", group: base(1, stale),
		finished: succeeded("b", 2*time.Minute+time.Second),
	}, {
		name: "a run ended later than expected", group: base(1, stale),
		finished: succeeded("a", 2*time.Minute), wantDue: true,
	}, {
		name: "a first run ended within the second after the group's median", group: withNewItem,
		finished: succeeded("c", 91*time.Second),
	}, {
		name: "a first run ended later than the group's median", group: withNewItem,
		finished: succeeded("c", 92*time.Second), wantDue: true,
	}, {
		name: "no item kept a run: a first run ended within the second after the default", group: neverRan,
		finished: succeeded("a", DefaultRun+time.Second),
	}, {
		name: "no item kept a run: a first run ended later than the default", group: neverRan,
		finished: succeeded("a", DefaultRun+2*time.Second), wantDue: true,
	}, {
		name: "a run failed", group: base(1, stale),
		finished: []planner.Outcome{{Item: "a", Result: v1alpha1.ResultFailed, Duration: time.Second}}, wantDue: true,
	}, {
		name: "an item failing again: its first failure made the forecast",
		group: func() *v1alpha1.OaatGroup {
			g := base(1, stale)()
			g.Status.Items[0].FailureCount = 1
			return g
		},
		finished: []planner.Outcome{{Item: "a", Result: v1alpha1.ResultFailed, Duration: time.Second}},
	}, {
		name: "the run that closes a cycle of as many runs as items", group: base(4, stale),
		finished: succeeded("a", time.Minute), wantDue: true,
	}, {
		name: "a new round starts",
		group: func() *v1alpha1.OaatGroup {
			g := base(1, stale)()
			g.Spec.Mode = v1alpha1.ModeEachOnce
			g.Annotations = map[string]string{v1alpha1.AnnotationReset: "again"}
			return g
		},
		wantDue: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := input(tc.group())
			in.Rand = fixedRand{}
			plan := planner.Decide(in)
			plan.Finished = tc.finished
			if due := Due(in, &plan); due != tc.wantDue {
				t.Errorf("due %v, want %v", due, tc.wantDue)
			}
		})
	}
}

// TestAtRisk: the condition forecast from a pass (the group of TestDue, on time), and the condition
// of a forecast cut short by its pass limit, whose message says that later deadlines are not judged.
func TestAtRisk(t *testing.T) {
	g := group(item{"a", ago(2 * time.Hour), time.Minute}, item{"b", ago(90 * time.Minute), 2 * time.Minute})
	in := input(g)
	in.Rand = fixedRand{}
	if diff := cmp.Diff(Condition(nil, 1, t0), AtRisk(in, planner.Decide(in))); diff != "" {
		t.Errorf("condition (-want +got):\n%s", diff)
	}
	cut := Forecast{From: t0, Until: at(24 * time.Hour), Stop: StopPassLimit, Passes: 72, ReachedAt: at(3 * time.Hour)}
	want := Condition(nil, 1, t0)
	want.Message += "; the forecast stopped after 72 passes at 2026-11-21T15:00:00Z: later deadlines are not judged"
	if diff := cmp.Diff(want, conditionOf(g, cut, t0)); diff != "" {
		t.Errorf("condition of a forecast cut short (-want +got):\n%s", diff)
	}
}
