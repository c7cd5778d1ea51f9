package runstats

import (
	"math"
	"testing"
	"time"
)

// The law of a learned timeout, as sequences of an item's kept durations, and its growth after a
// run it stopped.
func TestLearnedTimeout(t *testing.T) {
	lo, hi := time.Minute, 2*time.Hour
	for _, tc := range []struct {
		name   string
		recent []int64
		factor int64
		want   time.Duration
	}{
		{"no kept run: the maximum", nil, 3, hi},
		{"three times the longest kept run", []int64{100, 300, 200}, 3, 15 * time.Minute},
		{"the longest, not the median: one slow run lately is not stopped", []int64{100, 100, 1000, 100, 100}, 3, 50 * time.Minute},
		{"short runs: the minimum", []int64{5, 4, 6}, 3, lo},
		{"long runs: the maximum", []int64{3000}, 3, hi},
		{"a huge kept duration does not overflow", []int64{math.MaxInt64 / 2}, 100, hi},
		{"factor 2", []int64{600}, 2, 20 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LearnedTimeout(tc.recent, tc.factor, lo, hi); got != tc.want {
				t.Errorf("LearnedTimeout(%v, %d) = %v, want %v", tc.recent, tc.factor, got, tc.want)
			}
		})
	}
}

// A backup that grows past its timeout: each stopped run is kept at the timeout's length, so the
// next timeout doubles (factor 2) until the run fits or the maximum is reached; it never shrinks
// while the stopped runs are kept.
func TestLearnedTimeoutGrowsAfterAStop(t *testing.T) {
	lo, hi := time.Minute, 2*time.Hour
	recent := []int64{600, 600, 600}
	var timeouts []time.Duration
	for range 5 {
		timeout := LearnedTimeout(recent, 2, lo, hi)
		timeouts = append(timeouts, timeout)
		// The run needs 100 minutes; it is stopped at the timeout, kept at its length.
		run := min(100*time.Minute, timeout)
		recent = append(recent, int64(run/time.Second))
		recent = recent[max(len(recent)-5, 0):]
	}
	want := []time.Duration{20 * time.Minute, 40 * time.Minute, 80 * time.Minute, 160 * time.Minute, 200 * time.Minute}
	for i := range want {
		want[i] = min(want[i], hi)
	}
	for i := range want {
		if timeouts[i] != want[i] {
			t.Fatalf("timeouts %v, want %v", timeouts, want)
		}
	}
}

func TestLearnedTimeoutMinAboveMax(t *testing.T) {
	// Admission refuses min above max; a stored object that has it gets min, never less.
	if got := LearnedTimeout([]int64{10}, 3, time.Hour, time.Minute); got != time.Hour {
		t.Errorf("min above max: %v, want the min", got)
	}
}
