// Package runstats reads an item's recent run durations (status.items[].recentRunSeconds, the
// newest last): their median, and whether the newest run was unusually short or long against the
// runs kept before it. It is pure: the planner announces an unusual run (an event) and lists the
// items whose newest run is unusual (condition UnusualRuns), the status metrics export the ratio
// (oaat_item_last_run_duration_ratio), and the alerts OaatItemRunTooShort and OaatItemRunTooLong
// compare it with the same factors (tests/prometheus checks that they agree). A verdict never
// changes a run's outcome.
package runstats

import (
	"slices"
)

const (
	// MinSamples is how many runs kept before the newest it is compared with, at the least: with
	// fewer, no run is unusual.
	MinSamples = 3
	// ShortFactor is the ratio to the median under which a run is unusually short.
	ShortFactor = 0.1
	// LongFactor is the ratio to the median over which a run is unusually long.
	LongFactor = 3
	// MinMedianSeconds is the median under which no run is unusual: durations are kept in whole
	// seconds, and for runs of a few seconds a second's rounding is the whole difference.
	MinMedianSeconds = 10
)

// Kind is the verdict on a run's duration.
type Kind int

const (
	// Usual is a run within the factors, or one that cannot be judged (too few runs before it, or
	// their median under MinMedianSeconds).
	Usual Kind = iota
	// Short is a run under ShortFactor times the median of the runs before it.
	Short
	// Long is a run over LongFactor times the median of the runs before it.
	Long
)

// Kinds returns every Kind.
func Kinds() []Kind {
	return []Kind{Usual, Short, Long}
}

// Verdict is what the newest kept run's duration says.
type Verdict struct {
	// Kind is the verdict.
	Kind Kind
	// Seconds is the newest run's duration.
	Seconds int64
	// Median is the median of the runs kept before it, in seconds.
	Median float64
	// Before is how many runs were kept before it.
	Before int
	// Judged is false when the run cannot be judged: fewer than MinSamples runs before it, or a
	// median under MinMedianSeconds. Ratio is meaningful only when true.
	Judged bool
}

// Ratio is the newest run's duration over the median of the runs before it.
func (v Verdict) Ratio() float64 {
	if v.Median == 0 {
		return 0
	}
	return float64(v.Seconds) / v.Median
}

// Median is the median of seconds: the middle one, or the mean of the two middle ones for an even
// count; 0 for none.
func Median(seconds []int64) float64 {
	n := len(seconds)
	if n == 0 {
		return 0
	}
	// Sorted in an array on the stack for the few durations an item keeps: the planner judges
	// every item's newest run in every pass, and the forecast plays thousands of passes.
	var buf [8]int64
	sorted := append(buf[:0], seconds...)
	slices.Sort(sorted)
	if n%2 == 1 {
		return float64(sorted[n/2])
	}
	return float64(sorted[n/2-1]+sorted[n/2]) / 2
}

// Longest is the longest of seconds, 0 for none.
func Longest(seconds []int64) int64 {
	var longest int64
	for _, s := range seconds {
		longest = max(longest, s)
	}
	return longest
}

// Newest judges the newest of recent (an item's recentRunSeconds, the newest last) against the
// median of the runs before it.
func Newest(recent []int64) Verdict {
	if len(recent) == 0 {
		return Verdict{}
	}
	last := len(recent) - 1
	v := Verdict{Seconds: recent[last], Before: last, Median: Median(recent[:last])}
	if v.Before < MinSamples || v.Median < MinMedianSeconds {
		return v
	}
	v.Judged = true
	switch ratio := v.Ratio(); {
	case ratio < ShortFactor:
		v.Kind = Short
	case ratio > LongFactor:
		v.Kind = Long
	}
	return v
}
