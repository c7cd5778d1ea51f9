package schedule

import "time"

// Timing is a group's schedule: how often each item should succeed and how long a failed item
// waits before it may run again.
type Timing struct {
	// Frequency is the time an item waits after a success.
	Frequency time.Duration
	// FailureCoolOff is the time an item waits after a failure; zero means no wait.
	FailureCoolOff time.Duration
}

// Item is the part of an item's history that scheduling reads. A zero time means never.
type Item struct {
	// Name is the item.
	Name string
	// LastSuccess is when the item's last successful run ended.
	LastSuccess time.Time
	// LastFailure is when the item's last failed run ended.
	LastFailure time.Time
}

// EligibleAt is the instant from which the item may start; the zero time when it may always start.
func (t Timing) EligibleAt(it Item) time.Time {
	var at time.Time
	if !it.LastSuccess.IsZero() {
		at = it.LastSuccess.Add(t.Frequency)
	}
	if t.FailureCoolOff > 0 && !it.LastFailure.IsZero() {
		if coolOffEnds := it.LastFailure.Add(t.FailureCoolOff); coolOffEnds.After(at) {
			at = coolOffEnds
		}
	}
	return at
}

// Eligible reports whether the item may start at now.
func (t Timing) Eligible(it Item, now time.Time) bool {
	return !now.Before(t.EligibleAt(it))
}

// Candidates returns, in their given order, the items that may start at now (phase one).
func (t Timing) Candidates(items []Item, now time.Time) []Item {
	var candidates []Item
	for _, it := range items {
		if t.Eligible(it, now) {
			candidates = append(candidates, it)
		}
	}
	return candidates
}

// NextEligible returns the earliest instant after now at which one of the items becomes
// eligible, and false when no item waits (every item is eligible now, or there are none).
func (t Timing) NextEligible(items []Item, now time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	for _, it := range items {
		at := t.EligibleAt(it)
		if !at.After(now) {
			continue
		}
		if !found || at.Before(next) {
			next, found = at, true
		}
	}
	return next, found
}
