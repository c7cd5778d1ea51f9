package main

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// span is an interval of time; a zero end means it has not ended.
type span struct{ from, to time.Time }

// specHistory is what the chaos run set in the groups' specs and when: the intervals during
// which each item was in its group, and each group's frequencies.
type specHistory struct {
	items map[string]map[string][]span // group → item → presence
	freqs map[string][]freqChange      // group → frequency changes, in order
	// pauses are the intervals during which no replica could act: no leader, or no API server.
	pauses []span
	// peers are, for each group naming a shared lock, the groups sharing one of its locks, itself
	// included: an item of it may wait for their items too.
	peers map[string][]string
}

type freqChange struct {
	at   time.Time
	freq time.Duration
}

func newSpecHistory() *specHistory {
	return &specHistory{items: map[string]map[string][]span{}, freqs: map[string][]freqChange{}}
}

func (h *specHistory) add(group, item string, at time.Time) {
	if h.items[group] == nil {
		h.items[group] = map[string][]span{}
	}
	h.items[group][item] = append(h.items[group][item], span{from: at})
}

func (h *specHistory) remove(group, item string, at time.Time) {
	spans := h.items[group][item]
	if n := len(spans); n > 0 && spans[n-1].to.IsZero() {
		spans[n-1].to = at
	}
}

func (h *specHistory) setFrequency(group string, freq time.Duration, at time.Time) {
	h.freqs[group] = append(h.freqs[group], freqChange{at: at, freq: freq})
}

// pause records an interval during which no replica could act.
func (h *specHistory) pause(from, to time.Time) {
	h.pauses = append(h.pauses, span{from, to})
}

// paused is how much of [from, to] the pauses cover, counting overlapping pauses once.
func (h *specHistory) paused(from, to time.Time) time.Duration {
	var d time.Duration
	covered := from // the part of [from, to] before covered is counted
	sorted := append([]span(nil), h.pauses...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].from.Before(sorted[j].from) })
	for _, p := range sorted {
		if lo, hi := maxTime(p.from, covered), minTime(p.to, to); hi.After(lo) {
			d += hi.Sub(lo)
			covered = hi
		}
	}
	return d
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// maxFrequency is the largest frequency the group had at any time in [from, to].
func (h *specHistory) maxFrequency(group string, from, to time.Time) time.Duration {
	var freq time.Duration
	for _, c := range h.freqs[group] {
		if c.at.After(to) {
			break
		}
		if !c.at.After(from) {
			freq = c.freq // in force at from
		} else {
			freq = max(freq, c.freq)
		}
	}
	return freq
}

// boundItems is how many items may run before an item of the group: the most items the group had,
// plus those of the groups sharing a lock with it.
func (h *specHistory) boundItems(group string) int {
	peers := h.peers[group]
	if len(peers) == 0 {
		return h.maxItemCount(group)
	}
	n := 0
	for _, p := range peers {
		n += h.maxItemCount(p)
	}
	return n
}

// maxItemCount is the most items the group had at once (bounded by maxItems), for its bound.
func (h *specHistory) maxItemCount(group string) int {
	n := 0
	for _, spans := range h.items[group] {
		if len(spans) > 0 {
			n++
		}
	}
	return min(n, maxItems)
}

// starvation is an item that waited longer than its frequency plus the bound.
type starvation struct {
	group, item string
	waited      time.Duration
	allowed     time.Duration
	still       bool // it had not started when the window ended
}

func (s starvation) String() string {
	verb := "waited"
	if s.still {
		verb = "was still waiting after"
	}
	return fmt.Sprintf("%s/%s %s %s (allowed %s)", s.group, s.item, verb, s.waited.Round(time.Second), s.allowed)
}

// starved returns the items that, within the window ending at end, waited to start for longer
// than allowed: from the end of their previous run (or from when they were added), frequency
// after a success (the largest it had meanwhile) and none after a failure, plus the bound:
// perItem for each item of the group and of the groups sharing a lock with it (each may run once
// before it, at most 8 s with kwok's random run times) and failover, for a new leader to sync and
// catch up. The time no replica could act (the pauses) does not count as waiting.
func (h *specHistory) starved(byGroup map[string][]perfkit.PodLife, end time.Time, perItem, failover time.Duration) []starvation {
	var out []starvation
	for group, items := range h.items {
		bound := failover + time.Duration(h.boundItems(group))*perItem
		for item, spans := range items {
			for _, sp := range spans {
				to := sp.to
				if to.IsZero() || to.After(end) {
					to = end
				}
				out = append(out, h.starvedIn(group, item, byGroup[group], span{sp.from, to}, bound)...)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].waited-out[i].allowed > out[j].waited-out[j].allowed })
	return out
}

func (h *specHistory) starvedIn(group, item string, pods []perfkit.PodLife, in span, bound time.Duration) []starvation {
	var out []starvation
	since, succeeded := in.from, false
	allowed := func(at time.Time) time.Duration {
		if succeeded {
			return bound + h.maxFrequency(group, since, at)
		}
		return bound
	}
	for _, p := range pods {
		if p.Item != item || p.SeenCreated.Before(in.from) || !p.SeenCreated.Before(in.to) {
			continue
		}
		if waited, limit := p.SeenCreated.Sub(since)-h.paused(since, p.SeenCreated), allowed(p.SeenCreated); waited > limit {
			out = append(out, starvation{group: group, item: item, waited: waited, allowed: limit})
		}
		if p.Live() {
			return out
		}
		since, succeeded = p.SeenEnded, p.Phase == corev1.PodSucceeded
	}
	if waited, limit := in.to.Sub(since)-h.paused(since, in.to), allowed(in.to); waited > limit {
		out = append(out, starvation{group: group, item: item, waited: waited, allowed: limit, still: true})
	}
	return out
}
