package planner

import (
	"slices"
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
