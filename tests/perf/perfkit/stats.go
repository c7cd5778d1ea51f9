package perfkit

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Latencies are durations measured once each.
type Latencies []time.Duration

// Percentile returns the p-th percentile (0 < p <= 100; 0 the smallest) by the nearest-rank method; 0 when
// there is no sample.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := append(Latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Min returns the smallest sample, 0 when there is none.
func (l Latencies) Min() time.Duration { return l.Percentile(0) }

// Max returns the largest sample, 0 when there is none.
func (l Latencies) Max() time.Duration { return l.Percentile(100) }

// Summary is "p50 X, p99 Y, max Z (n samples)" in milliseconds.
func (l Latencies) Summary() string {
	if len(l) == 0 {
		return "no samples"
	}
	return fmt.Sprintf("p50 %s, p99 %s, max %s (%d samples)", Ms(l.Percentile(50)), Ms(l.Percentile(99)), Ms(l.Max()), len(l))
}

// Ms formats a duration in milliseconds.
func Ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
