// Package schedule decides which item of a group may run and which runs next. It is pure: the
// caller passes the time and the random source, so every decision is reproducible.
//
// Phase one keeps the items that are eligible now: not successful within the frequency and not
// failed within the failure cool-off. Phase two picks among them the item whose last success is
// oldest (never succeeded counts as oldest), then among ties the one whose last failure is oldest
// (never failed counts as oldest, so untried items go before items that keep failing), then one at
// random.
package schedule
