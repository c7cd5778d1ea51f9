package locks

import (
	"cmp"
	"slices"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Place is a group's place in the queue of a lock: a promoted request first, then the higher
// Priority, then the earlier Since, then the smaller namespace and name. Every lock serves its
// queue in this one order, which all of them share (a group's request carries one priority for
// all its locks, and its promotion): a waiting group has a place in the queue of every lock it
// names, the free ones too, so that a group needing two locks is not starved by groups needing one
// of them. With every group at the default priority, the order is that of waiting.
type Place struct {
	// Promoted says that a lock passed the request over PassLimit times (status.lockWait.promotedAt,
	// or the lock's own status.passedOver).
	Promoted bool
	// Priority is the group's priority as the lock honours it (status.lockWait.priority).
	Priority int32
	// Since is when the group began to wait (status.lockWait.since).
	Since time.Time
	// Namespace is the group's namespace.
	Namespace string
	// Group is the group's name.
	Group string
}

// Compare orders the place against the other: negative when it comes first (slices.SortFunc).
func (p Place) Compare(o Place) int {
	return cmp.Or(-compareBool(p.Promoted, o.Promoted), cmp.Compare(o.Priority, p.Priority), p.Waited(o))
}

// Waited orders the place against the other by the time of waiting alone, as if no priority were
// honoured: the earlier Since, then the smaller namespace and name.
func (p Place) Waited(o Place) int {
	return cmp.Or(p.Since.Compare(o.Since), cmp.Compare(p.Namespace+"/"+p.Group, o.Namespace+"/"+o.Group))
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Before reports whether the place comes before the other.
func (p Place) Before(o Place) bool { return p.Compare(o) < 0 }

// Waits reports whether a group's request for the locks it names counts: it waits for them
// (status.lockWait) and is not being deleted. A group being deleted is no longer reconciled (a
// finalizer of another tool may keep it for long): its request would keep a free slot for a run
// that never comes, and starve every other waiter.
func Waits(g *v1alpha1.OaatGroup) bool {
	return g.Status.LockWait != nil && g.DeletionTimestamp.IsZero()
}

// Requests reports whether a lock wait asks the lock of that key for pod: it names the pod and
// does not yield the lock.
func Requests(w *v1alpha1.LockWait, key, pod string) bool {
	return w != nil && w.Pod != "" && w.Pod == pod && !slices.Contains(w.Yielded, key)
}
