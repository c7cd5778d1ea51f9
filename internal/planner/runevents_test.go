package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestRunEventsFailures: with spec.runEvents Failures a success is recorded without an event, and
// a failure keeps its event.
func TestRunEventsFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events v1alpha1.RunEvents
		phase  corev1.PodPhase
		code   int32
		want   []string
	}{
		{"success, all events", "", corev1.PodSucceeded, 0, []string{v1alpha1.ReasonRunSucceeded}},
		{"success, All", v1alpha1.RunEventsAll, corev1.PodSucceeded, 0, []string{v1alpha1.ReasonRunSucceeded}},
		{"success, Failures", v1alpha1.RunEventsFailures, corev1.PodSucceeded, 0, nil},
		{"failure, Failures", v1alpha1.RunEventsFailures, corev1.PodFailed, 2, []string{v1alpha1.ReasonRunFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup("a", "b")
			g.Spec.RunEvents = tc.events
			running(t, g, "a", 1, at(0))
			pod := finished(runPod(t, g, "a", 1, tc.phase), tc.code, "Completed", at(30*time.Second))

			p := Decide(input(g, time.Minute, pod))

			if !slices.Equal(reasons(p), tc.want) {
				t.Fatalf("events = %v, want %v", reasons(p), tc.want)
			}
			if len(p.Finished) != 1 || p.Status.CurrentRun == nil || p.Status.CurrentRun.Item != "b" {
				t.Fatalf("the run is not recorded with the next one started: finished %+v, currentRun %+v", p.Finished, p.Status.CurrentRun)
			}
		})
	}
}
