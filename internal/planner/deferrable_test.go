package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestDeferrableDeletions: a finished pod beyond podHistory of an item still in the group may wait
// to be deleted with others; one of an item removed from the group may not (its status entry goes
// with its last pod).
func TestDeferrableDeletions(t *testing.T) {
	g := newGroup("a", "b")
	old := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(time.Second))
	latest := finished(runPod(t, g, "a", 3, corev1.PodSucceeded), 0, "Completed", at(3*time.Second))
	removed := finished(runPod(t, g, "gone", 2, corev1.PodSucceeded), 0, "Completed", at(2*time.Second))
	itemStatus(g, "a").LastPodName = latest.Name

	p := Decide(input(g, time.Minute, old, latest, removed))

	got := map[string]bool{}
	for _, d := range p.Delete {
		got[d.Pod.Name] = d.Deferrable
	}
	if len(got) != 2 || !got[old.Name] || got[removed.Name] {
		t.Fatalf("deletions (pod: deferrable) = %v; want %s deferrable and %s not", got, old.Name, removed.Name)
	}
	if _, ok := got[latest.Name]; ok {
		t.Fatalf("deletes the latest pod of item a: %v", got)
	}
}
