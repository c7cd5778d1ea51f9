package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// disrupt marks the pod as the eviction API marks a pod it evicts (a node drain): the
// DisruptionTarget condition, and its deletion.
func disrupt(pod corev1.Pod, reason string) corev1.Pod {
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason,
	})
	pod.DeletionTimestamp = at(time.Minute)
	return pod
}

// A run whose pod is evicted (a node drain) is recorded as interrupted, not failed, whether the
// operator sees the pod's last state or only that it is gone: the disruption is written while the
// pod still ends. The item keeps its record and cool-off, and runs again as soon as the group may.
func TestDisruptedRunIsInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name string
		last func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod // the pods of the pass after
	}{
		{name: "pod gone before its last state was seen", last: func(*testing.T, *v1alpha1.OaatGroup) []corev1.Pod { return nil }},
		{name: "pod seen failed", last: func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod {
			t.Helper()
			return []corev1.Pod{finished(disrupt(runPod(t, g, "a", 1, corev1.PodFailed), "EvictionByEvictionAPI"), 137, "Error", at(time.Minute))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup("a", "b")
			g.Spec.FailureCoolOff = "1h"
			running(t, g, "a", 1, at(0))
			evicted := disrupt(runPod(t, g, "a", 1, corev1.PodRunning), "EvictionByEvictionAPI")

			p := Decide(input(g, time.Minute, evicted))
			if cr := p.Status.CurrentRun; cr == nil || cr.StopReason != v1alpha1.StopDisrupted || len(p.Delete) != 0 {
				t.Fatalf("while the evicted pod ends: currentRun %+v, deletes %v; want stopReason Disrupted and no delete", cr, deleted(p))
			}
			g = applied(g, p)

			p = Decide(input(g, 2*time.Minute, tc.last(t, g)...))
			a := planItem(t, p, "a")
			if a.FailureCount != 0 || a.LastFailure != nil || a.LastReason != string(v1alpha1.ReasonDisrupted) {
				t.Errorf("item a = %+v; want no failure, last reason Disrupted", a)
			}
			if !slices.Equal(reasons(p), []v1alpha1.Reason{v1alpha1.ReasonRunInterrupted}) {
				t.Errorf("events %v, want one RunInterrupted", reasons(p))
			}
			if len(p.Finished) != 1 || p.Finished[0].Result != v1alpha1.ResultInterrupted {
				t.Errorf("finished %+v, want one interrupted run", p.Finished)
			}
			if p.Create == nil || p.Status.CurrentRun.Item != "a" {
				t.Errorf("next run %+v; want item a again at once, its place kept", p.Status.CurrentRun)
			}
		})
	}
}

// A pod the kubelet evicted under node pressure is Failed with DisruptionTarget and never
// deleted by the eviction: seen terminal at once, it is interrupted too. A pod a user deleted (no
// DisruptionTarget) still counts as a failure.
func TestDisruptionIsReadFromTheCondition(t *testing.T) {
	g := newGroup("a")
	running(t, g, "a", 1, at(0))
	pressured := finished(runPod(t, g, "a", 1, corev1.PodFailed), 137, "Error", at(time.Minute))
	pressured.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet"}}
	if p := Decide(input(g, 2*time.Minute, pressured)); planItem(t, p, "a").FailureCount != 0 || p.Finished[0].Result != v1alpha1.ResultInterrupted {
		t.Errorf("node-pressure eviction: item %+v, finished %+v; want interrupted", planItem(t, p, "a"), p.Finished)
	}

	deletedByUser := runPod(t, g, "a", 1, corev1.PodRunning)
	deletedByUser.DeletionTimestamp = &metav1.Time{Time: t0.Add(time.Minute)}
	p := Decide(input(g, time.Minute, deletedByUser))
	if p.Status.CurrentRun.StopReason != "" {
		t.Fatalf("a plain deletion set stopReason %q", p.Status.CurrentRun.StopReason)
	}
	p = Decide(input(applied(g, p), 2*time.Minute))
	if a := planItem(t, p, "a"); a.FailureCount != 1 || a.LastReason != string(v1alpha1.ReasonPodNotFound) {
		t.Errorf("a pod deleted by a user: item %+v; want one failure, PodNotFound", a)
	}
}
