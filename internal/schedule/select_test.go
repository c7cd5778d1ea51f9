package schedule

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

func names(n int) []Item {
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{Name: "item" + string(rune('1'+i))}
	}
	return items
}

// fixedRand always returns the same index, to show which ties a random choice is made among.
type fixedRand int

func (f fixedRand) IntN(n int) int { return int(f) % n }

// The scenarios of the original project's FindJobTests, with frequency 1m unless a case sets it.
// test_noitems has no counterpart: an empty item list is refused at admission (minItems 1).
func TestNextOriginalScenarios(t *testing.T) {
	tests := []struct {
		name   string
		timing Timing
		items  []Item
		want   string // "" means no item may run now
	}{
		{
			name:   "test_oneitem_noprevious_run",
			timing: Timing{Frequency: time.Minute},
			items:  names(1),
			want:   "item1",
		},
		{
			name:   "test_oneitem_success_within_freq",
			timing: Timing{Frequency: time.Minute},
			items:  []Item{{Name: "item1", LastSuccess: now}},
		},
		{
			name:   "test_oneitem_success_outside_freq",
			timing: Timing{Frequency: time.Minute},
			items:  []Item{{Name: "item1", LastSuccess: ago(5 * time.Minute)}},
			want:   "item1",
		},
		{
			name:   "test_oneitem_failure_within_freq_no_cooloff",
			timing: Timing{Frequency: time.Minute},
			items:  []Item{{Name: "item1", LastFailure: now}},
			want:   "item1",
		},
		{
			name:   "test_oneitem_failure_within_freq_within_cooloff",
			timing: Timing{Frequency: 10 * time.Minute, FailureCoolOff: 5 * time.Minute},
			items:  []Item{{Name: "item1", LastFailure: ago(time.Minute)}},
		},
		{
			name:   "test_oneitem_failure_within_freq_outside_cooloff",
			timing: Timing{Frequency: 10 * time.Minute, FailureCoolOff: time.Minute},
			items:  []Item{{Name: "item1", LastFailure: ago(5 * time.Minute)}},
			want:   "item1",
		},
		{
			name:   "test_oneitem_failure_outside_freq_within_cooloff",
			timing: Timing{Frequency: time.Minute, FailureCoolOff: 10 * time.Minute},
			items:  []Item{{Name: "item1", LastFailure: ago(5 * time.Minute)}},
		},
		{
			name:   "test_oneitem_failure_outside_freq_outside_cooloff",
			timing: Timing{Frequency: time.Minute, FailureCoolOff: 5 * time.Minute},
			items:  []Item{{Name: "item1", LastFailure: ago(10 * time.Minute)}},
			want:   "item1",
		},
		{
			name:   "test_5_single_oldest",
			timing: Timing{Frequency: time.Minute},
			items: []Item{
				{Name: "item1", LastSuccess: ago(5 * time.Minute)},
				{Name: "item2", LastSuccess: ago(5 * time.Minute)},
				{Name: "item3", LastSuccess: ago(7 * time.Minute)},
				{Name: "item4", LastSuccess: ago(5 * time.Minute)},
				{Name: "item5", LastSuccess: ago(5 * time.Minute)},
			},
			want: "item3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.timing.Next(tt.items, now, rand.New(rand.NewPCG(1, 2)), "")
			if tt.want == "" {
				if ok {
					t.Fatalf("Next() = %q, want no item", got.Name)
				}
				return
			}
			if !ok || got.Name != tt.want {
				t.Fatalf("Next() = %q, %v; want %q", got.Name, ok, tt.want)
			}
		})
	}
}

// The original had to skip asserting these (it only checked membership); with an injected random
// source the choice is exact, and each tied item is reachable while no other item ever is.
func TestNextRandomTieBreak(t *testing.T) {
	success, failure := ago(5*time.Minute), ago(7*time.Minute)
	allSucceeded := func() []Item {
		items := names(5)
		for i := range items {
			items[i].LastSuccess = success
		}
		return items
	}
	// test_5_single_oldest_failure and test_5_single_multiple_failure: items whose last success
	// ties and that failed are retried only after the tied items that never failed, so that failing
	// items do not block the others (never failed counts as the oldest failure). The original code
	// preferred the failed items here.
	oneFailed := allSucceeded()
	oneFailed[3].LastFailure = failure
	twoFailed := allSucceeded()
	twoFailed[1].LastFailure = failure
	twoFailed[3].LastFailure = failure
	// Every success ties and both failed ones tie too: only the failed ones remain after the
	// untried are gone.
	onlyFailed := []Item{
		{Name: "item2", LastSuccess: success, LastFailure: failure},
		{Name: "item4", LastSuccess: success, LastFailure: failure},
	}
	tests := []struct {
		name  string
		items []Item
		ties  []string
	}{
		{name: "test_5_noprevious_run", items: names(5), ties: []string{"item1", "item2", "item3", "item4", "item5"}},
		{name: "test_5_single_oldest_failure", items: oneFailed, ties: []string{"item1", "item2", "item3", "item5"}},
		{name: "test_5_single_multiple_failure", items: twoFailed, ties: []string{"item1", "item3", "item5"}},
		{name: "failed items tie on success and failure", items: onlyFailed, ties: []string{"item2", "item4"}},
	}
	timing := Timing{Frequency: time.Minute}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.ties {
				got, ok := timing.Next(tt.items, now, fixedRand(i), "")
				if !ok || got.Name != want {
					t.Errorf("Next() with random index %d = %q, %v; want %q", i, got.Name, ok, want)
				}
			}
			first, _ := timing.Next(tt.items, now, rand.New(rand.NewPCG(42, 7)), "")
			again, _ := timing.Next(tt.items, now, rand.New(rand.NewPCG(42, 7)), "")
			if first.Name != again.Name {
				t.Errorf("same seed chose %q then %q", first.Name, again.Name)
			}
			seen := map[string]bool{}
			for seed := range uint64(200) {
				got, _ := timing.Next(tt.items, now, rand.New(rand.NewPCG(seed, seed)), "")
				seen[got.Name] = true
			}
			for name := range seen {
				if !slices.Contains(tt.ties, name) {
					t.Errorf("chose %q, which is not among the ties %v", name, tt.ties)
				}
			}
			if len(seen) != len(tt.ties) {
				t.Errorf("200 seeds reached %v, want every tie of %v", seen, tt.ties)
			}
		})
	}
}

func TestChooseOrder(t *testing.T) {
	tests := []struct {
		name  string
		items []Item
		want  string
	}{
		{
			name: "never succeeded goes before an old success",
			items: []Item{
				{Name: "old", LastSuccess: ago(48 * time.Hour)},
				{Name: "never", LastFailure: ago(time.Hour)},
			},
			want: "never",
		},
		{
			name: "oldest success wins over failures",
			items: []Item{
				{Name: "a", LastSuccess: ago(2 * time.Hour), LastFailure: ago(time.Minute)},
				{Name: "b", LastSuccess: ago(time.Hour)},
			},
			want: "a",
		},
		{
			name: "tied success, older failure first",
			items: []Item{
				{Name: "recent", LastFailure: ago(time.Minute)},
				{Name: "older", LastFailure: ago(time.Hour)},
			},
			want: "older",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Choose(tt.items, fixedRand(0), "")
			if !ok || got.Name != tt.want {
				t.Fatalf("Choose() = %q, %v; want %q", got.Name, ok, tt.want)
			}
		})
	}
	if _, ok := Choose(nil, fixedRand(0), ""); ok {
		t.Fatal("Choose(nil) chose an item")
	}
}

// TestChooseKeeps: among the last ties, the item chosen before is chosen again, whatever the
// random source says; an item kept that is not among them is not.
func TestChooseKeeps(t *testing.T) {
	tied := []Item{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	for i := range 3 {
		if got, _ := Choose(tied, fixedRand(i), "b"); got.Name != "b" {
			t.Errorf("keeping b with random %d: chose %q", i, got.Name)
		}
	}
	older := []Item{{Name: "a"}, {Name: "b", LastSuccess: now}}
	if got, _ := Choose(older, fixedRand(0), "b"); got.Name != "a" {
		t.Errorf("keeping b, which succeeded last: chose %q, want a (the oldest success)", got.Name)
	}
}
