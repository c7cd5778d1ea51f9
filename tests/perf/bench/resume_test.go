package main

import (
	"math"
	"testing"
	"time"
)

func TestOrderResume(t *testing.T) {
	started := at(100_000)
	due := map[string]time.Time{}
	first := map[string]time.Time{}
	// g-i was due since i seconds before the start and resumed 100*i ms after it; g-5 never did.
	for i := range 20 {
		g := "g-" + string(rune('a'+i))
		due[g] = started.Add(-time.Duration(i) * time.Second)
		if i != 5 {
			first[g] = started.Add(time.Duration(100*i) * time.Millisecond)
		}
	}
	o := orderResume(due, first, started)
	if o[0].group != "g-t" || o[0].overdue != 19*time.Second || o[0].resume != 1900*time.Millisecond {
		t.Fatalf("most overdue first: got %+v", o[0])
	}
	if worst, ok := o.decileMax(); !ok || worst != 1900*time.Millisecond {
		t.Fatalf("decileMax = %v, %v; want 1.9s (g-t and g-s), true", worst, ok)
	}
	if got := tenths(o); got != "1.9s, 1.7s, 1.5s, 1.3s, 1.1s, 0.9s, 0.7s, not all, 0.3s, 0.1s" {
		t.Fatalf("tenths = %q", got)
	}
	if got := o.slowestOfDecile(3); got != "g-t 1.9s (overdue 19.0s), g-s 1.8s (overdue 18.0s)" {
		t.Fatalf("slowestOfDecile = %q", got)
	}
	// An outlier in the most overdue tenth, and one that never resumed, come first.
	first["g-s"] = started.Add(30 * time.Second)
	delete(first, "g-t")
	if got := orderResume(due, first, started).slowestOfDecile(1); got != "g-t never (overdue 19.0s)" {
		t.Fatalf("slowestOfDecile(1) = %q", got)
	}
	if got := orderResume(due, first, started).slowestOfDecile(5); got != "g-t never (overdue 19.0s), g-s 30.0s (overdue 18.0s)" {
		t.Fatalf("slowestOfDecile(5) = %q", got)
	}
}

func TestLeastSquares(t *testing.T) {
	slope, intercept, r2 := leastSquares([]float64{250, 500, 1000, 2000}, []float64{100 + 25, 100 + 50, 100 + 100, 100 + 200})
	if math.Abs(slope-0.1) > 1e-9 || math.Abs(intercept-100) > 1e-9 || math.Abs(r2-1) > 1e-9 {
		t.Fatalf("leastSquares = %v, %v, %v; want 0.1, 100, 1", slope, intercept, r2)
	}
	if _, _, r2 := leastSquares([]float64{1, 2, 3, 4}, []float64{1, 4, 9, 30}); r2 > 0.95 {
		t.Fatalf("a curve that is not a line has R² %v", r2)
	}
}
