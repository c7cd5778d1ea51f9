package runstats

import (
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		seconds []int64
		want    float64
	}{
		{nil, 0},
		{[]int64{7}, 7},
		{[]int64{60, 10}, 35},
		{[]int64{60, 1, 30}, 30},
		{[]int64{50, 1, 1, 60}, 25.5},
		{[]int64{90, 60, 600, 55, 58}, 60},
	} {
		if got := Median(tc.seconds); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.seconds, got, tc.want)
		}
	}
}

func TestMedianLeavesItsInputAlone(t *testing.T) {
	seconds := []int64{3, 1, 2}
	Median(seconds)
	if seconds[0] != 3 || seconds[1] != 1 || seconds[2] != 2 {
		t.Errorf("Median sorted its input: %v", seconds)
	}
}

// The laws of an unusual run, as sequences of an item's kept durations (the newest last).
func TestNewest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		recent []int64
		kind   Kind
		judged bool
		median float64
	}{
		{"no run", nil, Usual, false, 0},
		{"a first run", []int64{60}, Usual, false, 0},
		{"two runs before: too few", []int64{60, 60, 1}, Usual, false, 60},
		{"three runs before, a run 50 times faster", []int64{50, 50, 50, 1}, Short, true, 50},
		{"at a tenth of the median exactly: usual", []int64{50, 50, 50, 5}, Usual, true, 50},
		{"just under a tenth", []int64{100, 100, 100, 9}, Short, true, 100},
		{"a zero-second run", []int64{40, 40, 40, 40, 0}, Short, true, 40},
		{"at three times exactly: usual", []int64{20, 20, 20, 60}, Usual, true, 20},
		{"just over three times", []int64{20, 20, 20, 61}, Long, true, 20},
		{"the median, not the mean: one slow run before does not hide a slow one", []int64{20, 600, 20, 20, 70}, Long, true, 20},
		{"the median of an even count is the mean of the middle two", []int64{10, 30, 40, 60, 106}, Long, true, 35},
		{"a median under MinMedianSeconds: not judged", []int64{2, 2, 3, 0}, Usual, false, 2},
		{"a median of MinMedianSeconds is judged", []int64{10, 10, 10, 31}, Long, true, 10},
		{"an ordinary run", []int64{3600, 3500, 3700, 3900, 4000}, Usual, true, 3650},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Newest(tc.recent)
			if v.Kind != tc.kind || v.Judged != tc.judged || v.Median != tc.median {
				t.Errorf("Newest(%v) = %+v, want kind %v, judged %v, median %v", tc.recent, v, tc.kind, tc.judged, tc.median)
			}
			if len(tc.recent) > 0 && (v.Seconds != tc.recent[len(tc.recent)-1] || v.Before != len(tc.recent)-1) {
				t.Errorf("Newest(%v) = %+v: not the newest run, or the wrong count before it", tc.recent, v)
			}
		})
	}
}

func TestRatio(t *testing.T) {
	if r := Newest([]int64{50, 50, 50, 1}).Ratio(); r != 0.02 {
		t.Errorf("1 s against 50 s: ratio %v, want 0.02", r)
	}
	if r := (Verdict{Seconds: 5}).Ratio(); r != 0 {
		t.Errorf("no median: ratio %v, want 0", r)
	}
}

func TestMedianAllocatesNothingForKeptRuns(t *testing.T) {
	kept := []int64{90, 60, 600, 55, 58}
	if allocs := testing.AllocsPerRun(100, func() { Median(kept) }); allocs != 0 {
		t.Errorf("Median of %d kept runs allocates %v times, want 0", len(kept), allocs)
	}
}

func TestLongest(t *testing.T) {
	for _, tc := range []struct {
		seconds []int64
		want    int64
	}{
		{nil, 0},
		{[]int64{7}, 7},
		{[]int64{60, 10, 600, 5}, 600},
	} {
		if got := Longest(tc.seconds); got != tc.want {
			t.Errorf("Longest(%v) = %v, want %v", tc.seconds, got, tc.want)
		}
	}
}
