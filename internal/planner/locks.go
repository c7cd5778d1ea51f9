package planner

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// lockRecheck is how soon a group that waits for locks is looked at again should no event of its
// locks wake it (a waiter that stopped waiting is noticed through the lock's waitingGroups).
const lockRecheck = time.Minute

// LockInput is what a group's decision knows of the locks it names or holds a slot of.
type LockInput struct {
	// Locks are the OaatLocks of the group's namespace and the ClusterOaatLocks that the group
	// names (spec.locks, spec.clusterLocks) or whose holders include the group, by their key
	// (v1alpha1.Lock.LockKey); a named lock that does not exist is missing.
	Locks map[string]v1alpha1.Lock
	// NamespaceLabels are the labels of the group's namespace, which the namespaceSelector of
	// each ClusterOaatLock it names must select.
	NamespaceLabels map[string]string
	// NamespaceRead says that NamespaceLabels were read. Unread (the namespace is not found, or
	// may not be read), no ClusterOaatLock permits the group: the check fails closed.
	NamespaceRead bool
	// Waiters are the other groups that name one of the group's locks and wait for locks (their
	// status.lockWait is set): of the namespace for an OaatLock, of any for a ClusterOaatLock.
	Waiters []LockWaiter
	// Runners are the other groups that name one of the group's locks and have a current run
	// (status.currentRun): each takes a slot of every lock it names, listed by the lock or not
	// (the lock was created again, or named by an edit, while the run went on).
	Runners []LockRunner
}

// LockRunner is another group's current run.
type LockRunner struct {
	// Namespace is its group's namespace.
	Namespace string
	// Group is its group's name.
	Group string
	// Pod is the run's pod (status.currentRun.podName).
	Pod string
	// Locks are the keys of the locks its group names (v1alpha1.OaatGroupSpec.LockKeys).
	Locks []string
}

// LockWaiter is another group that waits for locks.
type LockWaiter struct {
	// Namespace is its namespace.
	Namespace string
	// Group is its name.
	Group string
	// Since is when it began to wait (status.lockWait.since).
	Since time.Time
	// Locks are the keys of the locks it names (v1alpha1.OaatGroupSpec.LockKeys): it claims a
	// slot of each.
	Locks []string
}

// LockPlan is what the controller writes to locks. Acquire is written before the group's status,
// in the order given (by lock name), all or none: on any failure the locks already written lose
// the group's holder again and the status is not written. Release is written after the group's
// status, once it no longer names the released runs.
type LockPlan struct {
	// Acquire are the locks whose holders gain the group's new run (replacing the group's slot
	// of an ended run, if any).
	Acquire []LockUpdate
	// Release are the locks whose holders lose the group's slot: its run has ended, never
	// started, or belongs to an earlier group of the same name.
	Release []LockUpdate
	// Assert are the locks the group names whose holders lack its live run (the lock was deleted
	// and created again, or named by an edit while the run went on): they gain it, over their
	// capacity if need be, since the run's pod is live whatever the lock says; a lock over its
	// capacity lets no run start until enough of its runs have ended. Written with Acquire.
	Assert []LockUpdate
	// Waited is how long the group waited for its locks before this acquisition; zero when it
	// did not wait.
	Waited time.Duration
}

// LockUpdate is a new list of holders of one lock.
type LockUpdate struct {
	// Lock is the OaatLock or ClusterOaatLock as read; it is written only if unchanged since.
	Lock v1alpha1.Lock
	// Holders are its new holders.
	Holders []v1alpha1.LockHolder
}

// lockProblem returns why the group cannot start items because of spec.locks or
// spec.clusterLocks, or an empty reason.
func (d *decision) lockProblem() (reason, text string) {
	var missing, missingCluster []string
	for _, name := range d.group.Spec.Locks {
		if d.in.Locks.Locks[name] == nil {
			missing = append(missing, fmt.Sprintf("%q", name))
		}
	}
	if len(missing) > 0 {
		return v1alpha1.ReasonLockNotFound, fmt.Sprintf("OaatLock %s named by spec.locks not found in namespace %s",
			strings.Join(missing, ", "), d.group.Namespace)
	}
	var refused []string
	for _, name := range d.group.Spec.ClusterLocks {
		lock, _ := d.in.Locks.Locks[v1alpha1.ClusterLockKey(name)].(*v1alpha1.ClusterOaatLock)
		if lock == nil {
			missingCluster = append(missingCluster, fmt.Sprintf("%q", name))
			continue
		}
		switch err := LockPermits(lock, d.in.Locks.NamespaceLabels); {
		case !d.in.Locks.NamespaceRead:
			refused = append(refused, fmt.Sprintf("ClusterOaatLock %s: the labels of the namespace, which its spec.namespaceSelector must select, could not be read", lock.Name))
		case err != nil:
			refused = append(refused, err.Error())
		}
	}
	if len(missingCluster) > 0 {
		return v1alpha1.ReasonLockNotFound, fmt.Sprintf("ClusterOaatLock %s named by spec.clusterLocks not found",
			strings.Join(missingCluster, ", "))
	}
	if len(refused) > 0 {
		return v1alpha1.ReasonLockNotPermitted, fmt.Sprintf("namespace %s may not use %s", d.group.Namespace,
			strings.Join(refused, "; "))
	}
	return "", ""
}

// LockPermits returns nil when the ClusterOaatLock's namespaceSelector selects a namespace of
// these labels, else why not. An absent selector selects no namespace and an empty one every
// namespace, as metav1.LabelSelectorAsSelector reads them; an invalid selector selects none.
func LockPermits(lock *v1alpha1.ClusterOaatLock, namespaceLabels map[string]string) error {
	sel := lock.Spec.NamespaceSelector
	if sel == nil {
		return fmt.Errorf("ClusterOaatLock %s: it has no spec.namespaceSelector, which selects no namespace", lock.Name)
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return fmt.Errorf("ClusterOaatLock %s: its spec.namespaceSelector is invalid: %w", lock.Name, err)
	}
	if !selector.Matches(labels.Set(namespaceLabels)) {
		return fmt.Errorf("ClusterOaatLock %s: its spec.namespaceSelector (%s) does not select the namespace's labels", lock.Name, selector)
	}
	return nil
}

// claim is a group's place in the queue of a lock: the earlier since, then the smaller
// namespace and name.
type claim struct {
	since     time.Time
	namespace string
	group     string
}

func (c claim) before(o claim) bool {
	if !c.since.Equal(o.since) {
		return c.since.Before(o.since)
	}
	return c.namespace+"/"+c.group < o.namespace+"/"+o.group
}

// takeLocks plans the acquisition of every lock of spec.locks for the run of item in pod, and
// reports whether the run may start. A lock has room for the group when its free slots (those
// not held by other groups) outnumber the waiters with an earlier claim that name it: a slot
// freed is kept for the group that has waited longest, even while that group still waits for
// another lock, so that a group needing two locks is not starved by groups needing one. When a
// lock has no room, nothing is acquired and status.lockWait records the wait.
func (d *decision) takeLocks(item, pod string) bool {
	names := slices.Sorted(slices.Values(d.group.Spec.LockKeys()))
	if len(names) == 0 {
		return true
	}
	st := &d.plan.Status
	mine := claim{since: d.stamp.Time, namespace: d.group.Namespace, group: d.group.Name}
	if st.LockWait != nil {
		mine.since = st.LockWait.Since.Time
	}
	var blocked []string
	for _, name := range names {
		if !d.roomFor(d.in.Locks.Locks[name], mine) {
			blocked = append(blocked, name)
		}
	}
	if len(blocked) > 0 {
		d.lockBlocked = true
		st.LockWait = &v1alpha1.LockWait{Since: metav1.NewTime(mine.since), Locks: blocked}
		return false
	}
	if st.LockWait != nil {
		d.plan.Locks.Waited = max(d.in.Now.Sub(st.LockWait.Since.Time), 0)
		st.LockWait = nil
	}
	holder := v1alpha1.LockHolder{Group: d.group.Name, GroupUID: string(d.group.UID), Item: item, Pod: pod, Since: d.stamp}
	for _, name := range names {
		lock := d.in.Locks.Locks[name]
		h := holder
		if lock.GetNamespace() == "" {
			h.Namespace = d.group.Namespace
		}
		holders := append(d.othersHolding(lock), h)
		SortHolders(holders)
		d.plan.Locks.Acquire = append(d.plan.Locks.Acquire, LockUpdate{Lock: lock, Holders: holders})
	}
	return true
}

// roomFor reports whether the lock has a slot for the claim: more free slots than earlier claims
// of other waiting groups on it. The group's own slot (of an ended run) counts as free; the
// current run of another group naming the lock takes a slot whether the lock lists it or not.
func (d *decision) roomFor(lock v1alpha1.Lock, mine claim) bool {
	others := d.othersHolding(lock)
	free := lock.CapacityOrDefault() - len(others)
	for _, run := range d.in.Locks.Runners {
		listed := slices.ContainsFunc(others, func(h v1alpha1.LockHolder) bool {
			return h.Group == run.Group && h.Pod == run.Pod && v1alpha1.HolderNamespace(h, lock) == run.Namespace
		})
		if !listed && slices.Contains(run.Locks, lock.LockKey()) {
			free--
		}
	}
	for _, w := range d.in.Locks.Waiters {
		theirs := claim{since: w.Since, namespace: w.Namespace, group: w.Group}
		self := w.Namespace == d.group.Namespace && w.Group == d.group.Name
		if !self && slices.Contains(w.Locks, lock.LockKey()) && theirs.before(mine) {
			free--
		}
	}
	return free > 0
}

// othersHolding are the lock's holders other than the group.
func (d *decision) othersHolding(lock v1alpha1.Lock) []v1alpha1.LockHolder {
	var others []v1alpha1.LockHolder
	for _, h := range lock.LockHolders() {
		if !HolderOf(h, lock, d.group) {
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

// settleLocks ends the lock wait of a group that no longer waits, marks the items that wait only
// for a lock, and plans the release of the group's slots that its current run does not hold: the
// run ended, never started (the operator stopped between taking the slot and recording the run),
// or the slot is an earlier group's of the same name. A slot is released only once no pod of the
// group but the current run's is live, so that a lock never has more live pods than slots.
func (d *decision) settleLocks() {
	st := &d.plan.Status
	if !d.lockBlocked {
		st.LockWait = nil
	}
	d.assertHolders()
	if st.LockWait != nil {
		for i := range st.Items {
			if it := &st.Items[i]; it.WaitReason == "" && it.NextEligibleAt == nil {
				it.WaitReason = v1alpha1.WaitLockHeld
			}
		}
	}
	if d.pods.anyLive() {
		return
	}
	acquiring := map[string]bool{}
	for _, u := range d.plan.Locks.Acquire {
		acquiring[u.Lock.LockKey()] = true
	}
	for _, name := range slices.Sorted(maps.Keys(d.in.Locks.Locks)) {
		lock := d.in.Locks.Locks[name]
		if acquiring[name] {
			continue
		}
		stale := slices.ContainsFunc(lock.LockHolders(), func(h v1alpha1.LockHolder) bool {
			return HolderOf(h, lock, d.group) && !d.holdsFor(h, st.CurrentRun)
		})
		if stale {
			d.plan.Locks.Release = append(d.plan.Locks.Release, LockUpdate{Lock: lock, Holders: d.othersHolding(lock)})
		}
	}
}

// assertHolders plans that each lock the group names that exists lists the group's current run
// as a holder while its pod is live: a lock's holders follow the live runs, not only the writes at
// a run's start and end, so that a lock created again (kubectl replace --force, a GitOps
// re-create, a restore) or named by an edit while the run goes on counts it. A lock that the
// holder puts over its capacity is reported once, by an event, when it is written.
func (d *decision) assertHolders() {
	cr := d.plan.Status.CurrentRun
	if cr == nil || d.pods.current == nil || d.pods.current.Name != cr.PodName || Terminal(d.pods.current) {
		return
	}
	acquiring := map[string]bool{}
	for _, u := range d.plan.Locks.Acquire {
		acquiring[u.Lock.LockKey()] = true
	}
	for _, name := range slices.Sorted(slices.Values(d.group.Spec.LockKeys())) {
		lock := d.in.Locks.Locks[name]
		if lock == nil || acquiring[name] || slices.ContainsFunc(lock.LockHolders(), func(h v1alpha1.LockHolder) bool { return d.holdsFor(h, cr) }) {
			continue
		}
		h := v1alpha1.LockHolder{Group: d.group.Name, GroupUID: string(d.group.UID), Item: cr.Item, Pod: cr.PodName, Since: cr.StartedAt}
		if lock.GetNamespace() == "" {
			h.Namespace = d.group.Namespace
		}
		holders := append(slices.Clone(lock.LockHolders()), h)
		SortHolders(holders)
		d.plan.Locks.Assert = append(d.plan.Locks.Assert, LockUpdate{Lock: lock, Holders: holders})
		if capacity := lock.CapacityOrDefault(); len(holders) > capacity {
			d.event(corev1.EventTypeWarning, v1alpha1.ReasonLockOverCapacity, fmt.Sprintf(
				"%s holds %d runs, over its capacity of %d: the run of item %q (pod %s) started before the lock listed it; no group naming it starts until enough of its runs have ended",
				v1alpha1.DescribeLocks([]string{name}), len(holders), capacity, cr.Item, cr.PodName))
		}
	}
}

// holdsFor reports whether the holder is the slot of the group's current run.
func (d *decision) holdsFor(h v1alpha1.LockHolder, cr *v1alpha1.CurrentRun) bool {
	return cr != nil && h.GroupUID == string(d.group.UID) && h.Pod == cr.PodName
}

// StaleHolder reports whether a lock holder of the group no longer holds for a run of it, as the
// group's status (read from the API server) says: its group is another (a different UID) or its
// pod is not the current run's.
func StaleHolder(h v1alpha1.LockHolder, group *v1alpha1.OaatGroup) bool {
	cr := group.Status.CurrentRun
	return h.GroupUID != string(group.UID) || cr == nil || cr.PodName != h.Pod
}

// SortHolders orders a lock's holders by group name, as the lock's status keeps them.
func SortHolders(holders []v1alpha1.LockHolder) {
	slices.SortFunc(holders, func(a, b v1alpha1.LockHolder) int { return cmp.Compare(a.Group, b.Group) })
}
