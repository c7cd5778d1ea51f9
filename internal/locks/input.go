// Package locks holds the decisions about OaatLocks and ClusterOaatLocks, as pure functions of
// what the controllers read: whether a group may use its locks, whether a lock has a slot for a
// group, the holders to write when a run starts, goes on or has ended, which groups a change of a
// lock concerns, and how many groups wait for it. The planner makes a group's decision with them;
// the controllers gather their input from the cache and write what they return.
package locks

import (
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Input is what a group's decision knows of the locks it names or holds a slot of.
type Input struct {
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
	Waiters []Waiter
	// Installation names the installation of the operator that decides (InstallationOf): its own
	// claim on a ClusterOaatLock is its waiters, which it sees; empty for one that watches all
	// namespaces.
	Installation string
	// AdoptionWindow is how long a ClusterOaatLock gives no slot to such an installation after
	// its creation (AdoptedAt; DefaultAdoptionWindow).
	AdoptionWindow time.Duration
	// Runners are the other groups that name one of the group's locks and have a current run
	// (status.currentRun): each takes a slot of every lock it names, listed by the lock or not
	// (the lock was created again, or named by an edit, while the run went on).
	Runners []Runner
}

// AddPeer records another group that names one of the group's locks: its current run, if any,
// and its claim, if it waits (Waits). runEnded says that the group is being deleted and its
// current run's pod has ended or is gone: such a group records no run (its passes only release
// its pods and keep its history, and another tool's finalizer may keep it for long), so its
// status.currentRun outlives the pod, and its run takes no slot any more.
func (in *Input) AddPeer(g *v1alpha1.OaatGroup, runEnded bool) {
	if cr := g.Status.CurrentRun; cr != nil && (!runEnded || g.DeletionTimestamp.IsZero()) {
		in.Runners = append(in.Runners, Runner{Namespace: g.Namespace, Group: g.Name, Pod: cr.PodName, Locks: g.Spec.LockKeys()})
	}
	if Waits(g) {
		in.Waiters = append(in.Waiters, Waiter{Namespace: g.Namespace, Group: g.Name, Since: g.Status.LockWait.Since.Time,
			Locks: g.Spec.LockKeys()})
	}
}

// Runner is another group's current run.
type Runner struct {
	// Namespace is its group's namespace.
	Namespace string
	// Group is its group's name.
	Group string
	// Pod is the run's pod (status.currentRun.podName).
	Pod string
	// Locks are the keys of the locks its group names (v1alpha1.OaatGroupSpec.LockKeys).
	Locks []string
}

// Waiter is another group that waits for locks.
type Waiter struct {
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

// Plan is what the controller writes to locks. Acquire is written before the group's status,
// in the order given (by lock name), all or none: on any failure the locks already written lose
// the group's holder again and the status is not written. Release is written after the group's
// status, once it no longer names the released runs.
type Plan struct {
	// Acquire are the locks whose holders gain the group's new run (replacing the group's slot
	// of an ended run, if any).
	Acquire []Update
	// Release are the locks whose holders lose the group's slot: its run has ended, never
	// started, or belongs to an earlier group of the same name.
	Release []Update
	// Assert are the locks the group names whose holders lack its live run (the lock was deleted
	// and created again, or named by an edit while the run went on): they gain it, over their
	// capacity if need be, since the run's pod is live whatever the lock says; a lock over its
	// capacity lets no run start until enough of its runs have ended. Written with Acquire.
	Assert []Update
	// Waited is how long the group waited for its locks before this acquisition; zero when it
	// did not wait.
	Waited time.Duration
}

// Update is a new list of holders of one lock.
type Update struct {
	// Lock is the OaatLock or ClusterOaatLock as read; it is written only if unchanged since.
	Lock v1alpha1.Lock
	// Holders are its new holders.
	Holders []v1alpha1.LockHolder
}

// keys are the keys of the updated locks.
func keys(updates []Update) map[string]bool {
	out := make(map[string]bool, len(updates))
	for _, u := range updates {
		out[u.Lock.LockKey()] = true
	}
	return out
}
