package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// untracked names the pods a plan removes the finalizer oaat.io/run-tracking from.
func untracked(p Plan) []string {
	var names []string
	for _, pod := range p.Untrack {
		names = append(names, pod.Name)
	}
	return names
}

// The current run's pod keeps the finalizer oaat.io/run-tracking while it runs, ends or is
// evicted, until the status that records its outcome is written: the plan untracks it in the pass
// that records it. A pod evicted while the operator was away is still there, ended, with its
// DisruptionTarget condition: the run is interrupted, not failed, and the item runs again.
func TestTrackedPodIsUntrackedOnceRecorded(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.FailureCoolOff = "1h"
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodRunning)
	if !podbuild.Tracked(&pod) {
		t.Fatalf("pod finalizers %v; want %s from its creation", pod.Finalizers, v1alpha1.FinalizerRunTracking)
	}
	if p := Decide(input(g, time.Minute, pod)); len(p.Untrack) != 0 {
		t.Fatalf("while the run goes on: untracks %v; want none", untracked(p))
	}
	evicted := disrupt(runPod(t, g, "a", 1, corev1.PodRunning), "EvictionByEvictionAPI")
	if p := Decide(input(g, time.Minute, evicted)); len(p.Untrack) != 0 {
		t.Fatalf("while the evicted pod ends: untracks %v; want none", untracked(p))
	}

	// No pass saw the eviction: the next one sees the pod ended, kept by the finalizer.
	ended := finished(disrupt(runPod(t, g, "a", 1, corev1.PodFailed), "EvictionByEvictionAPI"), 143, "Error", at(2*time.Minute))
	p := Decide(input(g, 3*time.Minute, ended))
	a := planItem(t, p, "a")
	if a.FailureCount != 0 || a.LastFailure != nil || a.LastReason != string(v1alpha1.ReasonDisrupted) {
		t.Errorf("item a = %+v; want no failure, last reason Disrupted", a)
	}
	if len(p.Finished) != 1 || p.Finished[0].Result != v1alpha1.ResultInterrupted {
		t.Errorf("finished %+v, want one interrupted run", p.Finished)
	}
	if !slices.Equal(untracked(p), []string{ended.Name}) {
		t.Errorf("untracks %v; want the recorded pod %s", untracked(p), ended.Name)
	}
	if p.Create == nil || p.Status.CurrentRun.Item != "a" || !podbuild.Tracked(p.Create) {
		t.Errorf("next run %+v (pod %v); want item a again at once, in a tracked pod", p.Status.CurrentRun, p.Create)
	}
}

// Pods that are not the current run give up the finalizer: one of an earlier version without it is
// left as it is, a rogue pod with it is untracked (and deleted), a finished pod recorded before
// is untracked whatever its state.
func TestPodsOtherThanTheCurrentRunAreUntracked(t *testing.T) {
	g := newGroup("a", "b")
	running(t, g, "b", 3, at(0))
	current := runPod(t, g, "b", 3, corev1.PodRunning)
	recorded := finished(runPod(t, g, "a", 2, corev1.PodSucceeded), 0, "Completed", at(0))
	old := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(0))
	old.Finalizers = nil
	rogue := runPod(t, g, "a", 4, corev1.PodRunning)
	rogue.Name = "backups-rogue"

	p := Decide(input(g, time.Minute, current, recorded, old, rogue))
	if want := []string{recorded.Name, rogue.Name}; !slices.Equal(untracked(p), want) {
		t.Errorf("untracks %v; want %v", untracked(p), want)
	}
	if !slices.Contains(deleted(p), rogue.Name+" rogue=true") {
		t.Errorf("deletes %v; want the rogue pod too", deleted(p))
	}
}

// forceDelete marks the pod as the API server marks a pod deleted without a grace period
// (force-deleted, or never scheduled) that a finalizer keeps.
func forceDelete(pod corev1.Pod) corev1.Pod {
	pod.DeletionTimestamp = at(time.Minute)
	pod.DeletionGracePeriodSeconds = new(int64)
	return pod
}

// A pod deleted without a grace period that has not ended is gone, as it was before the
// finalizer: no kubelet will report its end. Its run is recorded as PodNotFound (a failure), or as
// interrupted when the pod says it was disrupted, the pod is released and the next run starts.
func TestForceDeletedPodIsGone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		disrupted  bool
		wantResult v1alpha1.RunResult
		wantReason string
	}{
		{name: "deleted by a user", wantResult: v1alpha1.ResultFailed, wantReason: string(v1alpha1.ReasonPodNotFound)},
		{name: "deleted by the pod garbage collector of a lost node", disrupted: true, wantResult: v1alpha1.ResultInterrupted, wantReason: string(v1alpha1.ReasonDisrupted)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup("a", "b")
			running(t, g, "a", 1, at(0))
			pod := runPod(t, g, "a", 1, corev1.PodRunning)
			if tc.disrupted {
				pod = disrupt(pod, "DeletionByPodGC")
			}
			pod = forceDelete(pod)
			p := Decide(input(g, 2*time.Minute, pod))
			if len(p.Finished) != 1 || p.Finished[0].Result != tc.wantResult || planItem(t, p, "a").LastReason != tc.wantReason {
				t.Errorf("finished %+v, item a %+v; want %s with reason %s", p.Finished, planItem(t, p, "a"), tc.wantResult, tc.wantReason)
			}
			if !slices.Equal(untracked(p), []string{pod.Name}) {
				t.Errorf("untracks %v; want %s", untracked(p), pod.Name)
			}
			if p.Create == nil {
				t.Errorf("no run starts; want the next one: the gone pod is not live")
			}
		})
	}
}
