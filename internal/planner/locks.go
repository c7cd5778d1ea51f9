package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// lockRecheck is how soon a group that waits for locks is looked at again should no event of its
// locks wake it (a waiter that stopped waiting is noticed through the lock's waitingGroups).
const lockRecheck = time.Minute

// takeLocks plans the acquisition of every lock the group names for the run of item in pod
// (locks.Take), and reports whether the run may start, or else when to look again: after
// lockRecheck, or sooner when a lock begins to give slots to the installation (locks.AdoptedAt).
// When a lock has no room, nothing is acquired and status.lockWait records the wait, keeping its
// start.
func (d *decision) takeLocks(item, pod string) (ok bool, retryAt time.Time) {
	if len(d.group.Spec.LockKeys()) == 0 {
		return true, time.Time{}
	}
	st := &d.plan.Status
	mine := locks.Claim{Since: d.stamp.Time, Namespace: d.group.Namespace, Group: d.group.Name}
	if st.LockWait != nil {
		mine.Since = st.LockWait.Since.Time
	}
	holder := v1alpha1.LockHolder{Group: d.group.Name, GroupUID: string(d.group.UID), Item: item, Pod: pod, Since: d.stamp}
	acquire, blocked, adopted := locks.Take(d.group, d.in.Locks, mine, holder, d.in.Now)
	if len(blocked) > 0 {
		d.lockBlocked = true
		st.LockWait = &v1alpha1.LockWait{Since: metav1.NewTime(mine.Since), Locks: blocked}
		retryAt = d.in.Now.Add(lockRecheck)
		if !adopted.IsZero() && adopted.Before(retryAt) {
			retryAt = adopted
		}
		return false, retryAt
	}
	if st.LockWait != nil {
		d.plan.Locks.Waited = max(d.in.Now.Sub(st.LockWait.Since.Time), 0)
		st.LockWait = nil
	}
	d.plan.Locks.Acquire = acquire
	return true, time.Time{}
}

// reconcileLockSlots brings the group's lock slots in line with its run: it ends the lock wait of
// a group that no longer waits, lists its live run in the locks that lack it (locks.Assert), marks
// the items that wait only for a lock, and plans the release of the group's slots that its current
// run does not hold (locks.Release), once no pod of the group but the current run's is live.
func (d *decision) reconcileLockSlots() {
	st := &d.plan.Status
	if !d.lockBlocked {
		st.LockWait = nil
	}
	cr := st.CurrentRun
	live := cr != nil && d.pods.current != nil && d.pods.current.Name == cr.PodName && !podbuild.Terminal(d.pods.current)
	var over []locks.Overload
	d.plan.Locks.Assert, over = locks.Assert(d.group, d.in.Locks, cr, live, d.plan.Locks.Acquire)
	for _, o := range over {
		d.event(corev1.EventTypeWarning, v1alpha1.ReasonLockOverCapacity, fmt.Sprintf(
			"%s holds %d runs, over its capacity of %d: the run of item %q (pod %s) started before the lock listed it; no group naming it starts until enough of its runs have ended",
			v1alpha1.DescribeLocks([]string{o.Key}), o.Holders, o.Capacity, cr.Item, cr.PodName))
	}
	if st.LockWait != nil {
		for i := range st.Items {
			if it := &st.Items[i]; it.WaitReason == "" && it.NextEligibleAt == nil {
				it.WaitReason = v1alpha1.WaitLockHeld
			}
		}
	}
	if !d.pods.anyLive() {
		d.plan.Locks.Release = locks.Release(d.group, d.in.Locks, cr, d.plan.Locks.Acquire)
	}
}
