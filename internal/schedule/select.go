package schedule

import "time"

// Rand is the random source of the last tie-break. *math/rand/v2.Rand satisfies it; pass a
// seeded one to make a choice reproducible.
type Rand interface {
	// IntN returns a number in [0, n).
	IntN(n int) int
}

// Choose picks the item to run among candidates (phase two) and false when there are none: the
// oldest last success, then among ties the oldest last failure, then one at random. Never counts as
// the oldest in both comparisons. keep, when not empty, is the item chosen before (a group's
// request for its locks): among the last ties it is chosen again, so that the random tie-break
// does not change a waiting request at each pass.
func Choose(candidates []Item, rng Rand, keep string) (Item, bool) {
	switch len(candidates) {
	case 0:
		return Item{}, false
	case 1:
		return candidates[0], true
	}
	ties := oldest(candidates, func(it Item) time.Time { return it.LastSuccess })
	ties = oldest(ties, func(it Item) time.Time { return it.LastFailure })
	if len(ties) == 1 {
		return ties[0], true
	}
	for _, it := range ties {
		if keep != "" && it.Name == keep {
			return it, true
		}
	}
	return ties[rng.IntN(len(ties))], true
}

// Next runs both phases: the item to start at now, if any.
func (t Timing) Next(items []Item, now time.Time, rng Rand, keep string) (Item, bool) {
	return Choose(t.Candidates(items, now), rng, keep)
}

// oldest returns, in their given order, the items whose time (as read by at) is the earliest; the
// zero time is the earliest of all.
func oldest(items []Item, at func(Item) time.Time) []Item {
	var ties []Item
	for _, it := range items {
		switch {
		case len(ties) == 0 || at(it).Before(at(ties[0])):
			ties = []Item{it}
		case at(it).Equal(at(ties[0])):
			ties = append(ties, it)
		}
	}
	return ties
}
