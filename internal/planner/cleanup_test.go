package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestSupersededPodsWaitForABatch: a finished pod beyond podHistory of an item still in the group
// waits to be deleted with others (Plan.DeleteBatch) while the group is busy, and goes when it is
// idle after the pass or once supersededBatch of them wait; one of an item removed from the group
// goes at once, alone (its status entry goes with its last pod). The latest pod of an item stays.
func TestSupersededPodsWaitForABatch(t *testing.T) {
	g := newGroup("a", "b")
	old := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(time.Second))
	latest := finished(runPod(t, g, "a", 3, corev1.PodSucceeded), 0, "Completed", at(3*time.Second))
	removed := finished(runPod(t, g, "gone", 2, corev1.PodSucceeded), 0, "Completed", at(2*time.Second))
	itemStatus(g, "a").LastPodName = latest.Name
	batch := func(p Plan) []string {
		var names []string
		for _, pod := range p.DeleteBatch {
			names = append(names, pod.Name)
		}
		return names
	}

	// Busy after the pass (item b starts): the superseded pod waits; the removed item's goes.
	p := Decide(input(g, time.Minute, old, latest, removed))
	if p.Create == nil {
		t.Fatal("item b does not start")
	}
	if got := deleted(p); !slices.Equal(got, []string{removed.Name + " rogue=false"}) || len(p.DeleteBatch) != 0 {
		t.Fatalf("busy: deletes %v and batch %v; want %s alone and no batch", got, batch(p), removed.Name)
	}

	// Idle after the pass (every item succeeded within its frequency): the batch goes.
	itemStatus(g, "b").LastSuccess = at(50 * time.Second)
	itemStatus(g, "a").LastSuccess = at(3 * time.Second)
	p = Decide(input(g, time.Minute, old, latest))
	if p.Create != nil || !slices.Equal(batch(p), []string{old.Name}) || len(p.Delete) != 0 {
		t.Fatalf("idle: create %v, batch %v, deletes %v; want no run and the batch %s", p.Create != nil, batch(p), deleted(p), old.Name)
	}

	// Busy, but supersededBatch pods wait: they go together.
	g = newGroup("a", "b")
	var pods []corev1.Pod
	var want []string
	for run := int64(supersededBatch + 1); run >= 1; run-- {
		pod := finished(runPod(t, g, "a", run, corev1.PodSucceeded), 0, "Completed", at(time.Duration(run)*time.Second))
		pods = append(pods, pod)
		if run <= supersededBatch {
			want = append(want, pod.Name)
		}
	}
	itemStatus(g, "a").LastPodName = pods[0].Name
	p = Decide(input(g, time.Minute, pods...))
	if p.Create == nil || !slices.Equal(batch(p), want) {
		t.Fatalf("busy with %d waiting: create %v, batch %v; want a run and the batch %v", supersededBatch, p.Create != nil, batch(p), want)
	}
}
