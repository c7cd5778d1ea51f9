package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
		want   []v1alpha1.Reason // the reasons of the events
	}{
		{"success, all events", "", corev1.PodSucceeded, 0, []v1alpha1.Reason{v1alpha1.ReasonRunSucceeded}},
		{"success, All", v1alpha1.RunEventsAll, corev1.PodSucceeded, 0, []v1alpha1.Reason{v1alpha1.ReasonRunSucceeded}},
		{"success, Failures", v1alpha1.RunEventsFailures, corev1.PodSucceeded, 0, nil},
		{"failure, Failures", v1alpha1.RunEventsFailures, corev1.PodFailed, 2, []v1alpha1.Reason{v1alpha1.ReasonRunFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup("a", "b")
			g.Spec.RunEvents = tc.events
			running(t, g, "a", 1, at(0))
			pod := finished(runPod(t, g, "a", 1, tc.phase), tc.code, "Completed", at(30*time.Second))

			// The run is recorded and the next one starts, with or without an event.
			p := Decide(input(g, time.Minute, pod))
			result := v1alpha1.ResultSucceeded
			if tc.phase == corev1.PodFailed {
				result = v1alpha1.ResultFailed
			}
			got := struct {
				Reasons  []v1alpha1.Reason
				Finished []Outcome
				Create   string
			}{reasons(p), p.Finished, p.Create.Name}
			want := got
			want.Reasons, want.Finished, want.Create = tc.want, []Outcome{{Item: "a", Result: result, Duration: 30 * time.Second}}, podName(g, "b", 2)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events, outcomes and the next pod (-want +got):\n%s", diff)
			}
		})
	}
}
