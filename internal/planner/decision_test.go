package planner

import (
	"testing"
	"time"
)

// Decide's wake-up is the earliest instant any step returns, a zero instant asking nothing, an
// instant already past waits a second, and one to come is waited for exactly, however close.
func TestWakeUp(t *testing.T) {
	tests := []struct {
		name string
		at   []time.Time
		want time.Duration
	}{
		{name: "none", want: 0},
		{name: "only zero instants", at: []time.Time{{}, {}}, want: 0},
		{name: "one", at: []time.Time{t0.Add(time.Minute)}, want: time.Minute},
		{name: "earliest kept in any order", at: []time.Time{t0.Add(time.Hour), {}, t0.Add(3 * time.Second), t0.Add(time.Minute)}, want: 3 * time.Second},
		{name: "in less than a second: exactly then", at: []time.Time{t0.Add(300 * time.Millisecond)}, want: 300 * time.Millisecond},
		{name: "now", at: []time.Time{t0}, want: time.Second},
		{name: "past", at: []time.Time{t0.Add(-time.Hour), t0.Add(time.Minute)}, want: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w wakeUp
			for _, at := range tt.at {
				w.at(at)
			}
			if got := w.after(t0); got != tt.want {
				t.Fatalf("after = %v, want %v", got, tt.want)
			}
		})
	}
}
