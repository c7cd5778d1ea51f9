package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// sharedLock is an OaatLock that some of the chaos run's groups name, as created at the start.
type sharedLock struct {
	name     string
	capacity int
}

// sharedLocks are the chaos run's OaatLocks: one that lets the groups naming it run one at a time
// among themselves, one that lets two of them run at once.
var sharedLocks = []sharedLock{{name: "nas", capacity: 1}, {name: "db", capacity: 2}}

// locksOf returns the locks group i names: of every eight groups, one names nas, one db, and two
// both, in either order, so that groups needing two locks compete with groups needing one of
// them; the other four name none.
func locksOf(i int) []string {
	switch i % 8 {
	case 0:
		return []string{"nas"}
	case 1:
		return []string{"db"}
	case 2:
		return []string{"nas", "db"}
	case 3:
		return []string{"db", "nas"}
	}
	return nil
}

// newLock returns the OaatLock of that capacity.
func newLock(name string, capacity int) *v1alpha1.OaatLock {
	return &v1alpha1.OaatLock{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.OaatLockSpec{Capacity: int32(capacity)},
	}
}

// lockGrace is how long before a pod's start a change of its group's locks or of a lock's
// capacity may not have reached the replica that started it (its cache, a request in flight): a
// start is checked against a lock only when its group named the lock throughout the grace before
// it, against the highest capacity the lock had during it.
const lockGrace = 10 * time.Second

// capacityChange is a capacity a lock was given, and when.
type capacityChange struct {
	at       time.Time
	capacity int
}

// lockWatch is what the chaos run did to the shared locks and to the locks the groups name, and
// when: the spans during which each group named each lock, and each lock's capacities. The
// capacity check (checkCapacity) reads the pods' lives against it.
type lockWatch struct {
	// spans are, per lock and group, the spans during which the group named the lock.
	spans map[string]map[string][]span
	// capacities are, per lock, its capacities in order, the first from the start.
	capacities map[string][]capacityChange
}

// newLockWatch records the shared locks and the locks of the groups as created at start.
func newLockWatch(groups int, start time.Time) *lockWatch {
	w := &lockWatch{spans: map[string]map[string][]span{}, capacities: map[string][]capacityChange{}}
	for _, l := range sharedLocks {
		w.spans[l.name] = map[string][]span{}
		w.capacities[l.name] = []capacityChange{{at: start, capacity: l.capacity}}
	}
	for i := range groups {
		for _, lock := range locksOf(i) {
			w.setNamed(lock, groupName(i), true, start)
		}
	}
	return w
}

// setNamed records that the group began (named) or stopped naming the lock at that time.
func (w *lockWatch) setNamed(lock, group string, named bool, at time.Time) {
	spans := w.spans[lock][group]
	open := len(spans) > 0 && spans[len(spans)-1].to.IsZero()
	switch {
	case named && !open:
		w.spans[lock][group] = append(spans, span{from: at})
	case !named && open:
		spans[len(spans)-1].to = at
	}
}

// names reports whether the group names the lock now.
func (w *lockWatch) names(lock, group string) bool {
	spans := w.spans[lock][group]
	return len(spans) > 0 && spans[len(spans)-1].to.IsZero()
}

// setCapacity records the lock's new capacity.
func (w *lockWatch) setCapacity(lock string, capacity int, at time.Time) {
	w.capacities[lock] = append(w.capacities[lock], capacityChange{at: at, capacity: capacity})
}

// capacity is the lock's capacity now.
func (w *lockWatch) capacity(lock string) int {
	c := w.capacities[lock]
	return c[len(c)-1].capacity
}

// maxCapacity is the highest capacity the lock had during [from, to].
func (w *lockWatch) maxCapacity(lock string, from, to time.Time) int {
	highest := 0
	changes := w.capacities[lock]
	for i, c := range changes {
		ends := i+1 < len(changes) && !changes[i+1].at.After(from)
		if !ends && !c.at.After(to) {
			highest = max(highest, c.capacity)
		}
	}
	return highest
}

// namedThroughout reports whether the group named the lock during all of [from, to].
func (w *lockWatch) namedThroughout(lock, group string, from, to time.Time) bool {
	return slices.ContainsFunc(w.spans[lock][group], func(s span) bool {
		return !s.from.After(from) && (s.to.IsZero() || !s.to.Before(to))
	})
}

// namedDuring reports whether the group named the lock at some time in [from, to].
func (w *lockWatch) namedDuring(lock, group string, from, to time.Time) bool {
	return slices.ContainsFunc(w.spans[lock][group], func(s span) bool {
		return !s.from.After(to) && (s.to.IsZero() || !s.to.Before(from))
	})
}

// named are the groups that named the lock at some time, sorted.
func (w *lockWatch) named(lock string) []string {
	return slices.Sorted(maps.Keys(w.spans[lock]))
}

// peers maps each group to the groups that shared a lock with it at some time, itself included,
// for the starvation bound: an item of a locked group may wait for the items of all of them.
func (w *lockWatch) peers() map[string][]string {
	out := map[string][]string{}
	for lock := range w.spans {
		members := w.named(lock)
		for _, g := range members {
			for _, p := range members {
				if !slices.Contains(out[g], p) {
					out[g] = append(out[g], p)
				}
			}
		}
	}
	return out
}

// describe says which groups name which lock, for the report.
func (w *lockWatch) describe() string {
	parts := make([]string, 0, len(sharedLocks))
	for _, l := range sharedLocks {
		parts = append(parts, fmt.Sprintf("%s (capacity %d) named by %d groups", l.name, l.capacity, len(w.named(l.name))))
	}
	return strings.Join(parts, ", ")
}

// lockStarts is what the capacity check found for one lock.
type lockStarts struct {
	// checked are the starts of pods whose group named the lock throughout lockGrace before;
	// excused those of groups that began or stopped naming it within lockGrace.
	checked, excused int
	// most is the most pods holding the lock at a checked start, the new one included.
	most int
	// excess describes the checked starts at which more pods held the lock than its capacity.
	excess []string
}

// starts checks every start of a pod whose group named the lock against the pods that held a slot
// of it then: a pod holds a slot from its start while its group named the lock at that start, or
// from the time its group began to name it while it ran (the operator lists it then), to its end.
// A pod holds no slot at the start of another once its container had finished by that start
// (finishedAt, whole seconds, against the creationTimestamp), which refutes an end the observer
// saw late. Runs that started before a capacity cut, or before their group named the lock, may
// outnumber the capacity; no run may start while they do.
func (w *lockWatch) starts(lock string, pods []perfkit.PodLife) lockStarts {
	var r lockStarts
	for _, p := range pods {
		if !w.namedDuring(lock, p.Group, p.SeenCreated, p.SeenCreated) {
			continue
		}
		if !w.namedThroughout(lock, p.Group, p.SeenCreated.Add(-lockGrace), p.SeenCreated) {
			r.excused++
			continue
		}
		r.checked++
		holding := []string{p.Name}
		for _, q := range pods {
			if q.Name != p.Name && w.holdsAt(lock, q, p) {
				holding = append(holding, q.Name)
			}
		}
		r.most = max(r.most, len(holding))
		if capacity := w.maxCapacity(lock, p.SeenCreated.Add(-lockGrace), p.SeenCreated); len(holding) > capacity {
			r.excess = append(r.excess, fmt.Sprintf("%s: pod %s of group %s started while %d pods held lock %s of capacity %d: %v",
				p.SeenCreated.Format(time.RFC3339Nano), p.Name, p.Group, len(holding)-1, lock, capacity, holding[1:]))
		}
	}
	return r
}

// holdsAt reports whether pod q held a slot of the lock when pod p started.
func (w *lockWatch) holdsAt(lock string, q, p perfkit.PodLife) bool {
	start := p.SeenCreated
	live := q.SeenCreated.Before(start) && (q.SeenEnded.IsZero() || q.SeenEnded.After(start)) &&
		(q.FinishedAt.IsZero() || q.FinishedAt.After(p.Created))
	if !live {
		return false
	}
	atItsStart := w.namedThroughout(lock, q.Group, q.SeenCreated.Add(-lockGrace), q.SeenCreated)
	sinceSeen := start.Add(-lockGrace).After(q.SeenCreated) && w.namedDuring(lock, q.Group, q.SeenCreated, start.Add(-lockGrace))
	return atItsStart || sinceSeen
}

// checkCapacity reports, per lock, the starts of pods of the groups naming it at which more pods
// held a slot of it than its capacity (lockWatch.starts): violations.
func (c *chaos) checkCapacity(pods []perfkit.PodLife) {
	for _, l := range sharedLocks {
		r := c.locks.starts(l.name, pods)
		for _, e := range r.excess {
			c.violationf("capacity of lock %s: %s", l.name, e)
		}
		c.rep.Printf("  lock %s (capacity %d at the end, %d groups named it at some time): starts checked: %d, within %s of a change of the group's locks (not checked): %d; most pods holding it at a start: %d; starts over its capacity: %d (must be 0)",
			l.name, c.locks.capacity(l.name), len(c.locks.named(l.name)), r.checked, lockGrace, r.excused, r.most, len(r.excess))
		for i, e := range r.excess {
			if i == 10 {
				c.rep.Printf("    ... and %d more", len(r.excess)-i)
				break
			}
			c.rep.Printf("    %s", e)
		}
	}
}

// leakGrace is how long the check of leaked locks waits, once the groups are drained, for a
// stale holder to go: a slot is given back after the status write that ends its run, in the
// same pass or, after a replica's death between the two, on the next leader's first pass.
const leakGrace = 30 * time.Second

// checkLeaks reports the lock holders that outlive their run once the groups are drained: a
// holder whose group has no current run with its pod, or whose group is gone. Those still there
// after leakGrace are leaked locks, violations.
func (c *chaos) checkLeaks(ctx context.Context) error {
	first, err := c.staleHolders(ctx)
	if err != nil {
		return err
	}
	left := first
	deadline := time.Now().Add(leakGrace)
	for len(left) > 0 && time.Now().Before(deadline) {
		if err := perfkit.Sleep(ctx, time.Second); err != nil {
			return err
		}
		if left, err = c.staleHolders(ctx); err != nil {
			return err
		}
	}
	for _, s := range left {
		c.violationf("leaked lock: %s", s)
	}
	c.rep.Printf("  lock holders without a run once the groups were drained: %d; still there %s later (leaked locks): %d (must be 0)",
		len(first), leakGrace, len(left))
	for _, s := range append(first, left...) {
		c.rep.Printf("    %s", s)
	}
	return nil
}

// staleHolders lists the holders of the shared locks whose group has no current run with their
// pod, or is gone.
func (c *chaos) staleHolders(ctx context.Context) ([]string, error) {
	lockList := &v1alpha1.OaatLockList{}
	if err := c.env.Client.List(ctx, lockList, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	groups := &v1alpha1.OaatGroupList{}
	if err := c.env.Client.List(ctx, groups, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var stale []string
	for _, l := range lockList.Items {
		for _, h := range l.Status.Holders {
			i := slices.IndexFunc(groups.Items, func(g v1alpha1.OaatGroup) bool { return g.Name == h.Group })
			switch {
			case i < 0:
				stale = append(stale, fmt.Sprintf("lock %s: holder %s (pod %s) of a group that is gone", l.Name, h.Group, h.Pod))
			case locks.StaleHolder(h, &groups.Items[i]):
				stale = append(stale, fmt.Sprintf("lock %s: holder %s (pod %s, since %s) without that run", l.Name, h.Group, h.Pod,
					h.Since.Format(time.RFC3339)))
			}
		}
	}
	return stale, nil
}
