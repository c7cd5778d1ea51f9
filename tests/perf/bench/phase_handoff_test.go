package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

func TestHandOffGaps(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	pods := []perfkit.PodLife{
		{Name: "c", SeenCreated: at(5), SeenEnded: at(6.5)},
		{Name: "a", SeenCreated: at(0), SeenEnded: at(1.5)},
		{Name: "b", SeenCreated: at(2), SeenEnded: at(4)},
		{Name: "d", SeenCreated: at(6)}, // created while c ran
		{Name: "e", SeenCreated: at(7)}, // d still lives
	}
	gaps, overlaps := handOffGaps(pods, window{from: at(1)})
	if diff := cmp.Diff(perfkit.Latencies{500 * time.Millisecond, time.Second}, gaps); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
	want := []string{"pod d created while pod c still ran", "pod e created while pod d still ran"}
	if diff := cmp.Diff(want, overlaps); diff != "" {
		t.Errorf("overlaps (-want +got):\n%s", diff)
	}
}

func TestHandOffGrowth(t *testing.T) {
	flat := []handOffRound{{groups: 1000, handOffs: 30, reconciles: 180}, {groups: 100, handOffs: 30, reconciles: 150}}
	line, growth, ok := handOffGrowth(flat)
	if !ok || growth != 1.2 || !strings.Contains(line, "5.0 with 100 groups, 6.0 with 1000 (10.0x the groups): 1.20x, flat") {
		t.Errorf("flat: %q, %v, %v", line, growth, ok)
	}
	growing := []handOffRound{{groups: 100, handOffs: 30, reconciles: 3000}, {groups: 1000, handOffs: 30, reconciles: 30000}}
	if line, _, ok := handOffGrowth(growing); !ok || !strings.Contains(line, "10.00x, NOT flat") {
		t.Errorf("growing: %q, %v", line, ok)
	}
	for name, rounds := range map[string][]handOffRound{
		"one round":           {{groups: 100, handOffs: 30, reconciles: 150}},
		"no hand-off in one":  {{groups: 100, handOffs: 30, reconciles: 150}, {groups: 1000}},
		"rounds of same size": {{groups: 100, handOffs: 30, reconciles: 150}, {groups: 100, handOffs: 20, reconciles: 150}},
	} {
		if line, _, ok := handOffGrowth(rounds); ok {
			t.Errorf("%s: %q, want none", name, line)
		}
	}
}
