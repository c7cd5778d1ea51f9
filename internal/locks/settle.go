package locks

import (
	"cmp"
	"maps"
	"slices"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Overload is a lock that a live run was listed in over its capacity.
type Overload struct {
	// Key is the lock's key.
	Key string
	// Holders is how many runs it holds, the live run included.
	Holders int
	// Capacity is its capacity.
	Capacity int
}

// Assert plans that each lock the group names that exists lists the group's current run while
// its pod is live (live): a lock's holders follow the live runs, not only the writes at a run's
// start and end, so that a lock created again (kubectl replace --force, a GitOps re-create, a
// restore) or named by an edit while the run goes on counts it. Locks already in acquire are left
// to it. It also returns the locks the run puts over their capacity, to be reported.
func Assert(group *v1alpha1.OaatGroup, in Input, cr *v1alpha1.CurrentRun, live bool, acquire []Update) ([]Update, []Overload) {
	if cr == nil || !live {
		return nil, nil
	}
	acquiring := keys(acquire)
	var updates []Update
	var over []Overload
	for _, key := range slices.Sorted(slices.Values(group.Spec.LockKeys())) {
		lock := in.Locks[key]
		if lock == nil || acquiring[key] || slices.ContainsFunc(lock.LockHolders(), func(h v1alpha1.LockHolder) bool { return Holds(h, group, cr) }) {
			continue
		}
		h := v1alpha1.LockHolder{Group: group.Name, GroupUID: string(group.UID), Item: cr.Item, Pod: cr.PodName, Since: cr.StartedAt}
		holders := with(lock.LockHolders(), holderIn(h, lock, group))
		updates = append(updates, Update{Lock: lock, Holders: holders})
		if capacity := lock.CapacityOrDefault(); len(holders) > capacity {
			over = append(over, Overload{Key: key, Holders: len(holders), Capacity: capacity})
		}
	}
	return updates, over
}

// Release plans the release of the group's slots that its current run does not hold: the run
// ended, never started (the operator stopped between taking the slot and recording the run), or
// the slot is an earlier group's of the same name. The caller releases only once no pod of the
// group but the current run's is live, so that a lock never has more live pods than slots. Locks
// in acquire are left to it.
func Release(group *v1alpha1.OaatGroup, in Input, cr *v1alpha1.CurrentRun, acquire []Update) []Update {
	acquiring := keys(acquire)
	var updates []Update
	for _, key := range slices.Sorted(maps.Keys(in.Locks)) {
		lock := in.Locks[key]
		if acquiring[key] {
			continue
		}
		stale := slices.ContainsFunc(lock.LockHolders(), func(h v1alpha1.LockHolder) bool {
			return HolderOf(h, lock, group) && !Holds(h, group, cr)
		})
		if stale {
			updates = append(updates, Update{Lock: lock, Holders: Others(lock, group)})
		}
	}
	return updates
}

// Holds reports whether the holder is the slot of the group's current run cr.
func Holds(h v1alpha1.LockHolder, group *v1alpha1.OaatGroup, cr *v1alpha1.CurrentRun) bool {
	return cr != nil && h.GroupUID == string(group.UID) && h.Pod == cr.PodName
}

// StaleHolder reports whether a lock holder of the group no longer holds for a run of it, as the
// group's status (read from the API server) says: its group is another (a different UID) or its
// pod is not the current run's.
func StaleHolder(h v1alpha1.LockHolder, group *v1alpha1.OaatGroup) bool {
	return !Holds(h, group, group.Status.CurrentRun)
}

// SortHolders orders a lock's holders by group name, as the lock's status keeps them.
func SortHolders(holders []v1alpha1.LockHolder) {
	slices.SortFunc(holders, func(a, b v1alpha1.LockHolder) int { return cmp.Compare(a.Group, b.Group) })
}
