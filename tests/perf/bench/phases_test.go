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

func TestLargestStep(t *testing.T) {
	for _, tc := range []struct {
		steps []int
		want  int
	}{
		{nil, 0},
		{[]int{1000, 2000, 3000, 4000, 5000}, 1000},
		{[]int{250, 500, 1000, 2000}, 1000},
		{[]int{500, 300, 600}, 500},
	} {
		if got := largestStep(tc.steps); got != tc.want {
			t.Errorf("largestStep(%v) = %d, want %d", tc.steps, got, tc.want)
		}
	}
}
