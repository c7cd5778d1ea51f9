package runstats

import (
	"time"
)

// LearnedTimeout is an item's learned run timeout (spec.learnedRunTimeout): factor times the
// longest of its kept runs (recent, in seconds), within [lo, hi]; hi when it kept none. The
// longest, not the median: a timeout must not stop a run as long as one the item had lately. A
// run stopped by the timeout is kept at about the timeout's length, so with a factor of at least 2
// the next timeout is at least twice the last, up to hi.
func LearnedTimeout(recent []int64, factor int64, lo, hi time.Duration) time.Duration {
	if len(recent) == 0 {
		return hi
	}
	longest := Longest(recent)
	// Bounded before multiplying: a duration in seconds times the factor must not overflow.
	if longest >= int64(hi/time.Second)/max(factor, 1)+1 {
		return max(hi, lo)
	}
	return min(max(time.Duration(longest*factor)*time.Second, lo), max(hi, lo))
}
