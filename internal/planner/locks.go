package planner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
)

// lockRecheck is how soon a group that waits for locks is looked at again should no event of its
// locks wake it (a lock wakes the groups it grants, and those holding its grants when an earlier
// group waits).
const lockRecheck = time.Minute

// requestLocks asks the locks the group names for the run of item in pod (locks.Request), and
// reports whether the run may start, or else when to look again. The group writes no lock: while
// the run may not start, status.lockWait is its request, keeping its place.
func (d *decision) requestLocks(item, pod string) (ok bool, retryAt time.Time) {
	keys := d.group.Spec.LockKeys()
	if len(keys) == 0 {
		return true, time.Time{}
	}
	st := &d.plan.Status
	if wait := locks.Request(d.group, d.in.Locks, st.LockWait, item, pod, d.stamp.Time); wait != nil {
		d.lockBlocked = true
		st.LockWait = wait
		d.keepRejected()
		return false, d.in.Now.Add(lockRecheck)
	}
	waited := &LocksWaited{}
	if st.LockWait != nil {
		waited.Waited = max(d.in.Now.Sub(st.LockWait.Since.Time), 0)
	}
	for _, key := range slices.Sorted(slices.Values(keys)) {
		waited.Locks = append(waited.Locks, d.in.Locks.Locks[key])
	}
	d.plan.LocksWaited = waited
	st.LockWait = nil
	return true, time.Time{}
}

// endLockWait ends the request of a group that no longer waits for its locks (no run waits, or it
// starts), and marks the items that wait only for a lock.
func (d *decision) endLockWait() {
	st := &d.plan.Status
	if !d.lockBlocked {
		st.LockWait = nil
		return
	}
	for i := range st.Items {
		if it := &st.Items[i]; it.WaitReason == "" && it.NextEligibleAt == nil {
			it.WaitReason = v1alpha1.WaitLockHeld
		}
	}
}

// requestedItem is the item the group's request for locks is for, empty when it waits for none:
// the choice among tied items keeps it (schedule.Choose).
func (d *decision) requestedItem() string {
	if w := d.plan.Status.LockWait; w != nil {
		return w.Item
	}
	return ""
}

// slotsBeyondCapacity says, while the group waits for locks, which of them has fewer slots in force
// than its runs take (spec.lockOptions against spec.capacitySchedule), and until when; empty
// otherwise. Such a request waits without a place in the lock's queue.
func (d *decision) slotsBeyondCapacity() string {
	w := d.plan.Status.LockWait
	if w == nil {
		return ""
	}
	var notes []string
	for _, key := range w.Locks {
		lock := d.in.Locks.Locks[key]
		o := d.group.Spec.LockOptionFor(key)
		if lock == nil || o.Mode == v1alpha1.LockExclusive {
			continue
		}
		c := locks.CapacityAt(lock, d.in.Now)
		if int(o.Slots) <= c.InForce {
			continue
		}
		note := fmt.Sprintf("item %q needs %d slots of %s, which has %d in force", w.Item, o.Slots, v1alpha1.DescribeLocks([]string{key}), c.InForce)
		if !c.NextAt.IsZero() {
			note += fmt.Sprintf(" until %s (%d from then)", c.NextAt.UTC().Format(time.RFC3339), c.Next)
		}
		notes = append(notes, note)
	}
	return strings.Join(notes, "; ")
}
