package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
)

// recreateLock deletes a random lock of the run and creates it again at once, with its capacity,
// as kubectl replace --force or a GitOps re-create does: it comes back without holders while runs
// may hold it. The capacity check (checkCapacity) then shows whether a group started beside a live
// run that the new lock did not list yet; for the cluster lock, the runs of both installations.
func (c *chaos) recreateLock(ctx context.Context) error {
	l := c.locks.locks[c.rng.IntN(len(c.locks.locks))]
	old := l.empty()
	if err := c.env.Client.Get(ctx, l.key(), old); err != nil {
		return fmt.Errorf("reading %s %s: %w", l.kind(), l.name, err)
	}
	if err := client.IgnoreNotFound(c.env.Client.Delete(ctx, old)); err != nil {
		return fmt.Errorf("deleting %s %s: %w", l.kind(), l.name, err)
	}
	if err := c.env.Client.Create(ctx, l.object(c.locks.specs[l.name])); err != nil {
		return fmt.Errorf("creating %s %s again: %w", l.kind(), l.name, err)
	}
	c.faults.lockRecreates++
	if len(lockHolders(old)) > 0 {
		c.faults.heldRecreates++
	}
	if l.cluster {
		c.faults.clusterRecreates++
	}
	return nil
}

// resizeLock gives a random lock of the run another capacity, from 1 to 3: one below its holders
// when it has two or more (a cut: their runs drain, and no other starts until they have), else
// another at random. Every other time it gives the lock a capacity schedule instead: a window of
// a minute from the next whole minute (at least 5 s ahead), of a capacity from 0 to 3, which the
// lock's reconciler must put in force, and end, on time.
func (c *chaos) resizeLock(ctx context.Context) error {
	l := c.locks.locks[c.rng.IntN(len(c.locks.locks))]
	pick := 1 + c.rng.IntN(3)
	if pick == c.locks.capacity(l.name) {
		pick = pick%3 + 1
	}
	scheduled := c.rng.IntN(2) == 0
	spec := c.locks.specs[l.name]
	var holders int
	before := time.Now()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lock := l.empty()
		if err := c.env.Client.Get(ctx, l.key(), lock); err != nil {
			return err
		}
		holders = len(lockHolders(lock))
		spec = c.locks.specs[l.name]
		if scheduled {
			spec.schedule = []v1alpha1.CapacityWindow{nextMinuteWindow(time.Now(), int32(c.rng.IntN(4)))}
		} else {
			spec.capacity = pick
			if holders >= 2 {
				spec.capacity = holders - 1
			}
		}
		setLockSpec(lock, spec)
		return c.env.Client.Update(ctx, lock)
	})
	if err != nil {
		return fmt.Errorf("changing the capacity of %s %s: %w", l.kind(), l.name, err)
	}
	// A cut counts from when it was surely written, a raise from before: either way the check
	// allows what a replica that saw the other capacity may do. A window's own start and end are
	// the schedule's.
	at := before
	if next := specInForce(l.name, spec, before); next < c.locks.inForce(l.name, before) {
		at = time.Now()
	}
	c.locks.setSpec(l.name, spec, at)
	c.faults.lockResizes++
	if scheduled {
		c.faults.lockWindows++
	}
	if holders > c.locks.inForce(l.name, time.Now()) {
		c.faults.lockCuts++
	}
	if l.cluster {
		c.faults.clusterResizes++
	}
	return nil
}

// nextMinuteWindow is a capacity window of a minute from the first whole minute at least 5 s after
// now (UTC), of the capacity.
func nextMinuteWindow(now time.Time, capacity int32) v1alpha1.CapacityWindow {
	start := now.UTC().Add(5 * time.Second).Truncate(time.Minute).Add(time.Minute)
	return v1alpha1.CapacityWindow{Start: start.Format("15:04"), End: start.Add(time.Minute).Format("15:04"), Capacity: ptr.To(capacity)}
}

// specInForce is the capacity a lock of that spec has in force at t.
func specInForce(name string, spec lockSpec, t time.Time) int {
	return locks.CapacityAt(specLock(name, spec), t).InForce
}

// relockGroup adds a random lock to a random group's spec.locks or spec.clusterLocks (a group of
// bNamespace names the cluster lock only), or removes it when the group names it, while the
// group's runs go on. A group taking a lock as its spec.lockOptions say keeps its locks: the
// option must name one of them.
func (c *chaos) relockGroup(ctx context.Context) error {
	plain := slices.DeleteFunc(slices.Clone(c.plan), func(g groupPlan) bool { return g.option.Lock != "" })
	group := plain[c.rng.IntN(len(plain))]
	candidates := slices.DeleteFunc(slices.Clone(c.locks.locks), func(l sharedLock) bool {
		return group.namespace != namespace && !l.cluster
	})
	l := candidates[c.rng.IntN(len(candidates))]
	add := !c.locks.names(l.name, group.name)
	var running bool
	before := time.Now()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		g := &v1alpha1.OaatGroup{}
		if err := c.env.Client.Get(ctx, group.key(), g); err != nil {
			return err
		}
		running = g.Status.CurrentRun != nil
		names := &g.Spec.Locks
		if l.cluster {
			names = &g.Spec.ClusterLocks
		}
		*names = slices.DeleteFunc(*names, func(n string) bool { return n == l.name })
		if add {
			*names = append(*names, l.name)
		}
		return c.env.Client.Update(ctx, g)
	})
	if err != nil {
		return fmt.Errorf("editing the locks of group %s: %w", group.key(), err)
	}
	// An added lock counts from when it was surely written, a removed one until then: either way
	// the check allows what a replica that saw the other spec may do.
	if add {
		c.locks.setNamed(l.name, group.name, true, time.Now())
		c.faults.lockAdds++
	} else {
		c.locks.setNamed(l.name, group.name, false, before)
		c.faults.lockRemoves++
	}
	if running {
		c.faults.heldEdits++
	}
	if l.cluster {
		c.faults.clusterRelocks++
	}
	c.history.peers = c.locks.peers()
	return nil
}
