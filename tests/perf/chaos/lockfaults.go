package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// recreateLock deletes a random shared lock and creates it again at once, with its capacity, as
// kubectl replace --force or a GitOps re-create does: it comes back without holders while runs may
// hold it. The capacity check (checkCapacity) then shows whether a group started beside a live run
// that the new lock did not list yet.
func (c *chaos) recreateLock(ctx context.Context) error {
	l := sharedLocks[c.rng.IntN(len(sharedLocks))]
	old := &v1alpha1.OaatLock{}
	if err := c.env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: l.name}, old); err != nil {
		return fmt.Errorf("reading lock %s: %w", l.name, err)
	}
	if err := client.IgnoreNotFound(c.env.Client.Delete(ctx, old)); err != nil {
		return fmt.Errorf("deleting lock %s: %w", l.name, err)
	}
	if err := c.env.Client.Create(ctx, newLock(l.name, c.locks.capacity(l.name))); err != nil {
		return fmt.Errorf("creating lock %s again: %w", l.name, err)
	}
	c.faults.lockRecreates++
	if len(old.Status.Holders) > 0 {
		c.faults.heldRecreates++
	}
	return nil
}

// resizeLock gives a random shared lock another capacity, from 1 to 3: one below its holders when
// it has two or more (a cut: their runs drain, and no other starts until they have), else another
// at random.
func (c *chaos) resizeLock(ctx context.Context) error {
	l := sharedLocks[c.rng.IntN(len(sharedLocks))]
	pick := 1 + c.rng.IntN(3)
	if pick == c.locks.capacity(l.name) {
		pick = pick%3 + 1
	}
	var capacity, holders int
	before := time.Now()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lock := &v1alpha1.OaatLock{}
		if err := c.env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: l.name}, lock); err != nil {
			return err
		}
		holders, capacity = len(lock.Status.Holders), pick
		if holders >= 2 {
			capacity = holders - 1
		}
		lock.Spec.Capacity = int32(capacity)
		return c.env.Client.Update(ctx, lock)
	})
	if err != nil {
		return fmt.Errorf("changing the capacity of lock %s: %w", l.name, err)
	}
	// A cut counts from when it was surely written, a raise from before: either way the check
	// allows what a replica that saw the other capacity may do.
	at := before
	if capacity < c.locks.capacity(l.name) {
		at = time.Now()
	}
	c.locks.setCapacity(l.name, capacity, at)
	c.faults.lockResizes++
	if holders > capacity {
		c.faults.lockCuts++
	}
	return nil
}

// relockGroup adds a random shared lock to a random group's spec.locks, or removes it when the
// group names it, while the group's runs go on.
func (c *chaos) relockGroup(ctx context.Context) error {
	name := groupName(c.rng.IntN(c.cfg.groups))
	lock := sharedLocks[c.rng.IntN(len(sharedLocks))].name
	add := !c.locks.names(lock, name)
	var running bool
	before := time.Now()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		g := &v1alpha1.OaatGroup{}
		if err := c.env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, g); err != nil {
			return err
		}
		running = g.Status.CurrentRun != nil
		g.Spec.Locks = slices.DeleteFunc(g.Spec.Locks, func(l string) bool { return l == lock })
		if add {
			g.Spec.Locks = append(g.Spec.Locks, lock)
		}
		return c.env.Client.Update(ctx, g)
	})
	if err != nil {
		return fmt.Errorf("editing the locks of group %s: %w", name, err)
	}
	// An added lock counts from when it was surely written, a removed one until then: either way
	// the check allows what a replica that saw the other spec may do.
	if add {
		c.locks.setNamed(lock, name, true, time.Now())
		c.faults.lockAdds++
	} else {
		c.locks.setNamed(lock, name, false, before)
		c.faults.lockRemoves++
	}
	if running {
		c.faults.heldEdits++
	}
	c.history.peers = c.locks.peers()
	return nil
}
