package main

import "testing"

func TestSection(t *testing.T) {
	all := map[string]bool{}
	for _, p := range allPhases {
		all[p] = true
	}
	for _, c := range []struct {
		phases map[string]bool
		want   string
	}{
		{all, "bench"},
		{map[string]bool{phaseJitter: true, phaseLocks: true}, "bench-locks-jitter"},
		{map[string]bool{phaseScale: true}, "bench-scale"},
		{map[string]bool{phaseHandOff: true}, "bench-handoff"},
	} {
		if got := (issue15Config{phases: c.phases}).section(); got != c.want {
			t.Errorf("section(%v) = %q, want %q", c.phases, got, c.want)
		}
	}
}
