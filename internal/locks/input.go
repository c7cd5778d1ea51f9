// Package locks holds the decisions about OaatLocks and ClusterOaatLocks, as pure functions of
// what the controllers read. A lock's status has one writer, the lock's reconciler: Review decides
// its holders, its waiting count and the breaker it carries from the groups naming it. A group only
// asks: its request is its own status.lockWait (Request decides it), and its run starts once every
// lock it names lists the request's pod. Permits and Problem say whether a group may use its locks
// at all.
package locks

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Input is what a group's decision knows of the locks it names.
type Input struct {
	// Locks are the OaatLocks of the group's namespace and the ClusterOaatLocks that the group
	// names (spec.locks, spec.clusterLocks), by their key (v1alpha1.Lock.LockKey); a named lock
	// that does not exist is missing.
	Locks map[string]v1alpha1.Lock
	// NamespaceLabels are the labels of the group's namespace, which the namespaceSelector of
	// each ClusterOaatLock it names must select.
	NamespaceLabels map[string]string
	// NamespaceRead says that NamespaceLabels were read. Unread (the namespace is not found, or
	// may not be read), no ClusterOaatLock permits the group: the check fails closed.
	NamespaceRead bool
	// Waiters are the other groups that name one of the group's locks and wait for locks (Waits):
	// of the namespace for an OaatLock, of any the manager watches for a ClusterOaatLock.
	Waiters []Waiter
}

// AddWaiter records another group naming one of the group's locks, if it waits (Waits).
func (in *Input) AddWaiter(g *v1alpha1.OaatGroup) {
	if !Waits(g) {
		return
	}
	w := g.Status.LockWait
	in.Waiters = append(in.Waiters, Waiter{
		Place: Place{Since: w.Since.Time, Namespace: g.Namespace, Group: g.Name, Priority: w.Priority, Promoted: w.PromotedAt != nil},
		Pod:   w.Pod, Locks: g.Spec.LockKeys(), Yielded: w.Yielded, PromotedAt: w.PromotedAt,
	})
}

// Waiter is another group that waits for locks.
type Waiter struct {
	// Place is its place in the queues of the locks it names.
	Place
	// Pod is the pod its request is for (status.lockWait.pod).
	Pod string
	// Locks are the keys of the locks it names (v1alpha1.OaatGroupSpec.LockKeys).
	Locks []string
	// Yielded are the locks whose grant it gives back (status.lockWait.yielded).
	Yielded []string
	// PromotedAt is when its request was promoted (status.lockWait.promotedAt).
	PromotedAt *metav1.Time
}

// Request is the waiter's request as its group wrote it, for a review of a lock.
func (w Waiter) Request() *v1alpha1.LockWait {
	return &v1alpha1.LockWait{Since: metav1.NewTime(w.Since), Pod: w.Pod, Yielded: w.Yielded, Priority: w.Priority, PromotedAt: w.PromotedAt}
}

// wants reports whether the waiter asks the lock for a slot that it does not list yet.
func (w Waiter) wants(lock v1alpha1.Lock) bool {
	key := lock.LockKey()
	return slices.Contains(w.Locks, key) && Requests(&v1alpha1.LockWait{Pod: w.Pod, Yielded: w.Yielded}, key, w.Pod) &&
		!Lists(lock, w.Namespace, w.Group, w.Pod)
}
