package main

import (
	"testing"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

func TestSplitOverlaps(t *testing.T) {
	pods := []perfkit.PodLife{
		{Name: "g-a-1", Created: at(0), FinishedAt: at(5)},
		{Name: "g-b-2", Created: at(5), SeenCreated: at(6)}, // created in the second the first finished
		{Name: "h-a-1", Created: at(0), FinishedAt: at(7)},
		{Name: "h-b-2", Created: at(5)}, // created while h-a-1 ran
		{Name: "i-a-1", Created: at(0)}, // deleted while it ran: no finishedAt
		{Name: "i-b-2", Created: at(5)},
		{Name: "j-a-1", Created: at(0), FinishedAt: at(1)},
	}
	overlaps := []support.Overlap{
		{Pods: []string{"g-a-1", "g-b-2"}},
		{Pods: []string{"h-a-1", "h-b-2"}},
		{Pods: []string{"i-a-1", "i-b-2"}},
		{Pods: []string{"j-a-1", "unknown"}},
		{Pods: []string{"g-a-1", "g-b-2", "h-a-1"}},
	}
	confirmed, refuted := splitOverlaps(overlaps, pods, 1)
	if len(refuted) != 1 || refuted[0].Pods[0] != "g-a-1" {
		t.Fatalf("refuted = %v, want the g pair only", refuted)
	}
	if len(confirmed) != 4 {
		t.Fatalf("confirmed = %v, want the other four", confirmed)
	}
	// The order of the pair does not matter.
	if _, refuted := splitOverlaps([]support.Overlap{{Pods: []string{"g-b-2", "g-a-1"}}}, pods, 1); len(refuted) != 1 {
		t.Fatal("a reversed pair is not refuted")
	}
}

func TestSplitOverlapsBeyondCapacity(t *testing.T) {
	pods := []perfkit.PodLife{
		{Name: "a", Created: at(0), FinishedAt: at(9)},
		{Name: "b", Created: at(2), FinishedAt: at(4)},
		{Name: "c", Created: at(4), SeenCreated: at(5)}, // b had finished when c was created
		{Name: "d", Created: at(6)},                     // a and c still ran
		{Name: "e", Created: at(7)},
	}
	overlaps := []support.Overlap{
		{Pods: []string{"a", "b"}},           // within capacity 2: not an excess
		{Pods: []string{"a", "b", "c"}},      // refuted: b had finished
		{Pods: []string{"a", "c", "d"}},      // confirmed: three live at d's creation
		{Pods: []string{"a", "c", "d", "e"}}, // confirmed
		{Pods: []string{"a", "b", "unknown"}},
	}
	confirmed, refuted := splitOverlaps(overlaps, pods, 2)
	if len(refuted) != 1 || len(refuted[0].Pods) != 3 || refuted[0].Pods[1] != "b" {
		t.Fatalf("refuted = %v, want a, b, c only", refuted)
	}
	if len(confirmed) != 3 {
		t.Fatalf("confirmed = %v, want the three others beyond capacity", confirmed)
	}
}
