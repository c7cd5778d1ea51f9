package locks

import (
	"slices"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Take plans the acquisition of every lock the group names for the run that holder describes,
// all or none. A lock has room for the group when its free slots (those not held by other groups,
// nor taken by another group's current run that it does not list) outnumber the waiters with a
// claim before mine that name it (the slots are Slots: one while the breaker the lock carries is
// open): a slot freed is kept for the group that has waited longest,
// even while that group still waits for another lock, so that a group needing two locks is not
// starved by groups needing one. It returns the updates, by lock key, or, when a lock has no
// room, the keys of those without room and no update. A lock that gives no slot to the
// installation yet (AdoptedAt) has no room: retryAt is then when the last such lock will, the zero
// time when none is.
func Take(group *v1alpha1.OaatGroup, in Input, mine Claim, holder v1alpha1.LockHolder, now time.Time) (acquire []Update, blocked []string, retryAt time.Time) {
	keys := slices.Sorted(slices.Values(group.Spec.LockKeys()))
	for _, key := range keys {
		adopted := AdoptedAt(in.Locks[key], in)
		if now.Before(adopted) {
			retryAt = later(retryAt, adopted)
			blocked = append(blocked, key)
			continue
		}
		if !room(group, in, in.Locks[key], mine, now) {
			blocked = append(blocked, key)
		}
	}
	if len(blocked) > 0 {
		return nil, blocked, retryAt
	}
	for _, key := range keys {
		lock := in.Locks[key]
		acquire = append(acquire, Update{Lock: lock, Holders: with(Others(lock, group), holderIn(holder, lock, group))})
	}
	return acquire, nil, time.Time{}
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// room reports whether the lock has a slot for the claim: more free slots than earlier claims of
// other waiting groups on it. The group's own slot (of an ended run) counts as free; the current
// run of another group naming the lock takes a slot whether the lock lists it or not. The claim of
// another installation on a ClusterOaatLock (status.installationClaims), while it counts, is one
// earlier claim when its longest-waiting group began to wait before mine: its groups are not
// among the waiters this one sees.
func room(group *v1alpha1.OaatGroup, in Input, lock v1alpha1.Lock, mine Claim, now time.Time) bool {
	free := Slots(lock) - len(Others(lock, group))
	for _, run := range in.Runners {
		if slices.Contains(run.Locks, lock.LockKey()) && !Lists(lock, run.Namespace, run.Group, run.Pod) {
			free--
		}
	}
	for _, w := range in.Waiters {
		theirs := Claim{Since: w.Since, Namespace: w.Namespace, Group: w.Group}
		self := w.Namespace == group.Namespace && w.Group == group.Name
		if !self && slices.Contains(w.Locks, lock.LockKey()) && theirs.Before(mine) {
			free--
		}
	}
	if cl, ok := lock.(*v1alpha1.ClusterOaatLock); ok {
		// Against another installation's claim, the group's claim is its installation's: both
		// installations then order the two claims alike, a tie of their times by their names.
		// Compared with the group's namespace and name, the other claim would come first in
		// both, and neither would take the slot.
		ours := Claim{Since: mine.Since, Group: in.Installation}
		for _, c := range cl.Status.InstallationClaims {
			theirs := Claim{Since: c.Since.Time, Group: c.Installation}
			if c.Installation != in.Installation && Counts(c, now) && theirs.Before(ours) {
				free--
			}
		}
	}
	return free > 0
}

// Lists reports whether the lock lists the run of pod of the group of that namespace and name
// among its holders.
func Lists(lock v1alpha1.Lock, namespace, group, pod string) bool {
	return slices.ContainsFunc(lock.LockHolders(), func(h v1alpha1.LockHolder) bool {
		return h.Group == group && h.Pod == pod && v1alpha1.HolderNamespace(h, lock) == namespace
	})
}

// Others are the lock's holders other than the group's.
func Others(lock v1alpha1.Lock, group *v1alpha1.OaatGroup) []v1alpha1.LockHolder {
	var others []v1alpha1.LockHolder
	for _, h := range lock.LockHolders() {
		if !HolderOf(h, lock, group) {
			others = append(others, h)
		}
	}
	return others
}

// HolderOf reports whether the holder of the lock is a slot of a group of that namespace and
// name (of any UID).
func HolderOf(h v1alpha1.LockHolder, lock v1alpha1.Lock, group *v1alpha1.OaatGroup) bool {
	return h.Group == group.Name && v1alpha1.HolderNamespace(h, lock) == group.Namespace
}

// holderIn is the holder as the lock stores it: a ClusterOaatLock's holders name their group's
// namespace, an OaatLock's are of its own.
func holderIn(h v1alpha1.LockHolder, lock v1alpha1.Lock, group *v1alpha1.OaatGroup) v1alpha1.LockHolder {
	if lock.GetNamespace() == "" {
		h.Namespace = group.Namespace
	}
	return h
}

// with is the holders and one more, in the order a lock's status keeps them (SortHolders).
func with(holders []v1alpha1.LockHolder, h v1alpha1.LockHolder) []v1alpha1.LockHolder {
	out := append(slices.Clone(holders), h)
	SortHolders(out)
	return out
}
