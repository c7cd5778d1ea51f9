package schedule

import (
	"testing"
	"time"
)

func TestEligibleAt(t *testing.T) {
	timing := Timing{Frequency: time.Hour, FailureCoolOff: 10 * time.Minute}
	tests := []struct {
		name string
		item Item
		want time.Time
	}{
		{name: "never ran", item: Item{}, want: time.Time{}},
		{name: "success waits frequency", item: Item{LastSuccess: now}, want: now.Add(time.Hour)},
		{name: "failure waits cool-off", item: Item{LastFailure: now}, want: now.Add(10 * time.Minute)},
		{
			name: "the later of both",
			item: Item{LastSuccess: ago(55 * time.Minute), LastFailure: ago(time.Minute)},
			want: now.Add(9 * time.Minute),
		},
		{
			name: "frequency still running after a failure",
			item: Item{LastSuccess: ago(5 * time.Minute), LastFailure: ago(time.Minute)},
			want: now.Add(55 * time.Minute),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := timing.EligibleAt(tt.item); !got.Equal(tt.want) {
				t.Fatalf("EligibleAt() = %v, want %v", got, tt.want)
			}
		})
	}
	noCoolOff := Timing{Frequency: time.Hour}
	if got := noCoolOff.EligibleAt(Item{LastFailure: now}); !got.IsZero() {
		t.Fatalf("without cool-off a failed item waits until %v", got)
	}
}

func TestEligibleBoundary(t *testing.T) {
	timing := Timing{Frequency: time.Minute}
	it := Item{LastSuccess: ago(time.Minute)}
	if !timing.Eligible(it, now) {
		t.Fatal("an item is eligible at the instant its frequency ends")
	}
	if timing.Eligible(it, now.Add(-time.Nanosecond)) {
		t.Fatal("an item is not eligible before its frequency ends")
	}
}

func TestNextEligible(t *testing.T) {
	timing := Timing{Frequency: time.Hour, FailureCoolOff: 5 * time.Minute}
	items := []Item{
		{Name: "due", LastSuccess: ago(2 * time.Hour)},
		{Name: "soon", LastFailure: ago(time.Minute)},
		{Name: "later", LastSuccess: ago(30 * time.Minute)},
	}
	got, ok := timing.NextEligible(items, now)
	if !ok || !got.Equal(now.Add(4*time.Minute)) {
		t.Fatalf("NextEligible() = %v, %v; want %v", got, ok, now.Add(4*time.Minute))
	}
	if _, ok := timing.NextEligible(items[:1], now); ok {
		t.Fatal("NextEligible() found a wait when every item is due")
	}
}
