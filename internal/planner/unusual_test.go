package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/runstats"
)

// A run whose duration is unusual against the item's runs before it is announced (a Warning event
// naming its ratio) and listed by condition UnusualRuns; its outcome and the item's record are those
// of any run. The condition is absent until a run first is unusual, and turns False once the item's
// next run is usual.
func TestUnusualRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		before    []int64
		end       time.Duration
		phase     corev1.PodPhase
		code      int32
		reason    v1alpha1.Reason
		event     string
		condition string
	}{
		{"a success 50 times faster than its median", []int64{50, 50, 50}, time.Second, corev1.PodSucceeded, 0,
			v1alpha1.ReasonRunUnusuallyShort,
			`Item "a" ran 1s (succeeded), 0.02 times the median 50s of its 3 runs before: unusually short; the outcome stands`,
			`The newest run of 1 items was unusually short or long: "a" short (1s, 0.02 times the median)`},
		{"a failure over three times its median", []int64{20, 600, 20, 20}, 70 * time.Second, corev1.PodFailed, 1,
			v1alpha1.ReasonRunUnusuallyLong,
			`Item "a" ran 70s (failed), 3.5 times the median 20s of its 4 runs before: unusually long; the outcome stands`,
			`The newest run of 1 items was unusually short or long: "a" long (70s, 3.5 times the median)`},
		{"a run after too few runs", []int64{50, 50}, time.Second, corev1.PodSucceeded, 0, "", "", ""},
		{"a usual run", []int64{50, 40, 60}, 45 * time.Second, corev1.PodSucceeded, 0, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup("a")
			itemStatus(g, "a").RecentRunSeconds = tc.before
			running(t, g, "a", 4, at(0))
			pod := finished(runPod(t, g, "a", 4, tc.phase), tc.code, "Completed", at(tc.end))
			p := Decide(input(g, tc.end+time.Second, pod))

			it := p.Status.Items[0]
			if got := it.RecentRunSeconds[len(it.RecentRunSeconds)-1]; got != int64(tc.end/time.Second) {
				t.Errorf("the run's duration kept is %ds, want %v", got, tc.end)
			}
			if (it.LastSuccess != nil) != (tc.phase == corev1.PodSucceeded) || (it.FailureCount > 0) != (tc.phase == corev1.PodFailed) {
				t.Errorf("the verdict changed the outcome: %+v", it)
			}
			var unusual []Event
			for _, e := range p.Events {
				if e.Reason == v1alpha1.ReasonRunUnusuallyShort || e.Reason == v1alpha1.ReasonRunUnusuallyLong {
					unusual = append(unusual, e)
				}
			}
			c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionUnusualRuns)
			if tc.reason == "" {
				if len(unusual) > 0 || c != nil {
					t.Errorf("a usual run: events %+v, condition %+v", unusual, c)
				}
				return
			}
			want := Event{Type: corev1.EventTypeWarning, Reason: tc.reason, Message: tc.event}
			if len(unusual) != 1 || unusual[0] != want {
				t.Errorf("events %+v, want one %+v", unusual, want)
			}
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(v1alpha1.ReasonRunsUnusual) || c.Message != tc.condition {
				t.Fatalf("condition UnusualRuns %+v, want True %s %q", c, v1alpha1.ReasonRunsUnusual, tc.condition)
			}

			// The next decision sends no second event; once the item's next run is usual, the
			// condition turns False.
			again := Decide(input(applied(g, p), tc.end+2*time.Second, pod))
			for _, e := range again.Events {
				if e.Reason == tc.reason {
					t.Errorf("the unusual run announced again: %+v", e)
				}
			}
			later := applied(g, again)
			later.Status.Items[0].RecentRunSeconds = append(later.Status.Items[0].RecentRunSeconds, 45)
			c = meta.FindStatusCondition(Decide(input(later, tc.end+3*time.Second, pod)).Status.Conditions, v1alpha1.ConditionUnusualRuns)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonRunsUsual) {
				t.Errorf("after a usual run: condition %+v, want False %s", c, v1alpha1.ReasonRunsUsual)
			}
		})
	}
}

// Every verdict has its row (the map is exhaustive by lint; this walks the values), and only Usual
// has no event.
func TestUnusualRunsTable(t *testing.T) {
	for _, k := range runstats.Kinds() {
		row, ok := unusualRuns[k]
		if !ok {
			t.Errorf("verdict %d has no row", k)
		}
		if (row.reason == "") != (k == runstats.Usual) || (row.word == "") != (k == runstats.Usual) {
			t.Errorf("verdict %d: row %+v", k, row)
		}
	}
}

func TestRatioText(t *testing.T) {
	for r, want := range map[float64]string{0.02: "0.02", 0.123: "0.12", 3.5: "3.5", 50: "50", 123.4: "123"} {
		if got := ratioText(r); got != want {
			t.Errorf("ratioText(%v) = %q, want %q", r, got, want)
		}
	}
}
