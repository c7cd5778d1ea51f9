package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// With spec.learnedRunTimeout a run is bounded by its item's own kept durations: factor times the
// longest, within min and max, max for an item with none; the event names the learned bound.
func TestLearnedRunTimeout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		recent   []int64
		deadline time.Duration
		why      string
	}{
		{"twice the longest kept run", []int64{600, 300, 540}, 20 * time.Minute,
			"it ran longer than its learned timeout 20m0s (spec.learnedRunTimeout: 2 times the longest of its 3 kept runs, within 1m0s and 2h0m0s)"},
		{"after a run the timeout stopped, twice that run", []int64{600, 600, 1200}, 40 * time.Minute,
			"it ran longer than its learned timeout 40m0s (spec.learnedRunTimeout: 2 times the longest of its 3 kept runs, within 1m0s and 2h0m0s)"},
		{"short runs: the minimum", []int64{5, 5}, time.Minute,
			"it ran longer than its learned timeout 1m0s (spec.learnedRunTimeout: 2 times the longest of its 2 kept runs, within 1m0s and 2h0m0s)"},
		{"no kept run: the maximum", nil, 2 * time.Hour,
			"it ran longer than its learned timeout 2h0m0s (spec.learnedRunTimeout.max: it has no kept run)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := runningGroup(t, func(s *v1alpha1.OaatGroupSpec) {
				s.LearnedRunTimeout = &v1alpha1.LearnedRunTimeout{Factor: 2, Max: "2h"}
			}, "a", "b")
			itemStatus(g, "a").RecentRunSeconds = tc.recent
			pod := runPod(t, g, "a", 1, corev1.PodRunning)

			before := Decide(input(g, tc.deadline-time.Second, pod))
			if len(before.Delete) != 0 || before.Status.CurrentRun.StopReason != "" || before.RequeueAfter != time.Second {
				t.Errorf("a second before the learned deadline: deletes %d, stop reason %q, wake-up %v; want 0, no reason, 1s",
					len(before.Delete), before.Status.CurrentRun.StopReason, before.RequeueAfter)
			}
			at := Decide(input(g, tc.deadline, pod))
			if at.Status.CurrentRun.StopReason != v1alpha1.StopDeadlineExceeded || len(at.Delete) != 1 {
				t.Fatalf("at the learned deadline: stop reason %q, deletes %d; want DeadlineExceeded, 1", at.Status.CurrentRun.StopReason, len(at.Delete))
			}
			if want := stopEventOf(pod, corev1.EventTypeWarning, tc.why); *at.Delete[0].Event != *want {
				t.Errorf("event %+v, want %+v", *at.Delete[0].Event, *want)
			}
		})
	}
}
