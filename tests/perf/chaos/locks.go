package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// sharedLock is an OaatLock that some of the chaos run's groups name.
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

// newLock returns the OaatLock.
func newLock(l sharedLock) *v1alpha1.OaatLock {
	return &v1alpha1.OaatLock{
		ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: namespace},
		Spec:       v1alpha1.OaatLockSpec{Capacity: int32(l.capacity)},
	}
}

// lockWatch follows, per shared lock, the live item pods of the groups naming it, with an overlap
// tracker whose set is the lock: every moment at which two or more of them are live is recorded,
// and those with more than the lock's capacity are violations. The groups' locks never change
// during the run (spec edits keep spec.locks).
type lockWatch struct {
	trackers map[string]*support.OverlapTracker
	// named are the groups naming each lock.
	named map[string][]string
}

func newLockWatch(groups int) *lockWatch {
	w := &lockWatch{trackers: map[string]*support.OverlapTracker{}, named: map[string][]string{}}
	for i := range groups {
		for _, lock := range locksOf(i) {
			w.named[lock] = append(w.named[lock], groupName(i))
		}
	}
	for _, l := range sharedLocks {
		w.trackers[l.name] = support.NewLockTracker(l.name, w.named[l.name], "")
	}
	return w
}

// observe takes a pod event of the chaos namespace.
func (w *lockWatch) observe(ev watch.Event) {
	for _, t := range w.trackers {
		_ = t.Observe(ev) // only ERROR events are errors, and the observer sends none
	}
}

// peers maps each group to the groups sharing a lock with it, itself included, for the
// starvation bound: an item of a locked group may wait for the items of all of them.
func (w *lockWatch) peers() map[string][]string {
	out := map[string][]string{}
	for _, members := range w.named {
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
		parts = append(parts, fmt.Sprintf("%s (capacity %d) named by %d groups", l.name, l.capacity, len(w.named[l.name])))
	}
	return strings.Join(parts, ", ")
}

// checkCapacity reports, per lock, the moments at which more item pods of the groups naming it
// were live than its capacity; those the pods' own timestamps do not refute are violations.
func (c *chaos) checkCapacity(pods []perfkit.PodLife) {
	for _, l := range sharedLocks {
		t := c.locks.trackers[l.name]
		excess, refuted := splitOverlaps(t.Overlaps(), pods, l.capacity)
		for _, o := range excess {
			c.violationf("capacity of lock %s: %s", l.name, o)
		}
		c.rep.Printf("  lock %s (capacity %d, %d groups): most live pods of its groups at once: %d; capacity violations: %d (must be 0); refuted by the pods' own timestamps: %d",
			l.name, l.capacity, len(c.locks.named[l.name]), t.MaxLive(namespace, l.name), len(excess), len(refuted))
		for i, o := range append(excess, refuted...) {
			if i == 10 {
				c.rep.Printf("    ... and %d more", len(excess)+len(refuted)-i)
				break
			}
			c.rep.Printf("    %s", o)
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
