package controllers

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// statusRefusals remembers, per group, when this process last tried to write a status that the
// API server refused as invalid (planner.Input.StatusRefusedAt). It only paces the retries of a
// refusal that lasts: the refusal itself is recorded in the cluster (Ready, reason
// StatusRejected), and a process that starts afresh retries once, then paces again.
type statusRefusals struct {
	mu sync.Mutex
	at map[types.NamespacedName]time.Time
}

// refusedAt is when the group's status was last refused, zero if not since its last write.
func (s *statusRefusals) refusedAt(group types.NamespacedName) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at[group]
}

// refused notes a refusal of the group's status at now.
func (s *statusRefusals) refused(group types.NamespacedName, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[types.NamespacedName]time.Time{}
	}
	s.at[group] = now
}

// written drops the group's refusal once a status of it was written that no longer says
// StatusRejected: a status written while the refusal lasts (the run that was refused held back)
// keeps the pace.
func (s *statusRefusals) written(group types.NamespacedName, status v1alpha1.OaatGroupStatus) {
	if ready := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Reason != v1alpha1.ReasonStatusRejected {
		s.forget(group)
	}
}

// forget drops the group's refusal: it is gone.
func (s *statusRefusals) forget(group types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.at, group)
}

// lockRaces remembers the groups that lost the race for a lock's slot (their conditional write of
// the lock met a conflict), so that the lock's next change wakes them (groupsToWake): they do not
// wait for it in status (no claim was written), and without the hint would try again only after
// conflictRetry, losing again to a group that hands its slot from run to run. A hint only: the
// retry after conflictRetry stays, and a process that starts afresh remembers none.
type lockRaces struct {
	mu   sync.Mutex
	lost map[types.NamespacedName][]types.NamespacedName
}

// lostOn notes that group lost the race for a slot of the lock.
func (l *lockRaces) lostOn(lock, group types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		l.lost = map[types.NamespacedName][]types.NamespacedName{}
	}
	if !slices.Contains(l.lost[lock], group) {
		l.lost[lock] = append(l.lost[lock], group)
	}
}

// take returns the groups that lost a race for the lock since the last take, and forgets them.
func (l *lockRaces) take(lock types.NamespacedName) []types.NamespacedName {
	l.mu.Lock()
	defer l.mu.Unlock()
	groups := l.lost[lock]
	delete(l.lost, lock)
	return groups
}
