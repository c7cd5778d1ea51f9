package locks

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Claim is a group's place in the queue of a lock: the earlier Since, then the smaller
// namespace and name. A waiting group claims a slot of every lock it names, the free ones too,
// so that a group needing two locks is not starved by groups needing one of them.
type Claim struct {
	// Since is when the group began to wait (status.lockWait.since), or now when it does not.
	Since time.Time
	// Namespace is the group's namespace.
	Namespace string
	// Group is the group's name.
	Group string
}

// Before reports whether the claim comes before the other.
func (c Claim) Before(o Claim) bool {
	if !c.Since.Equal(o.Since) {
		return c.Since.Before(o.Since)
	}
	return c.Namespace+"/"+c.Group < o.Namespace+"/"+o.Group
}

// Waits reports whether a group's claim on the locks it names counts: it waits for them
// (status.lockWait) and is not being deleted. A group being deleted is no longer reconciled (a
// finalizer of another tool may keep it for long): its claim would keep a free slot for a run
// that never comes, and starve every other waiter.
func Waits(g *v1alpha1.OaatGroup) bool {
	return g.Status.LockWait != nil && g.DeletionTimestamp.IsZero()
}

// WaitingCount is the lock's status.waitingGroups: how many of the groups naming it wait (Waits).
func WaitingCount(naming []v1alpha1.OaatGroup) int32 {
	var n int32
	for i := range naming {
		if Waits(&naming[i]) {
			n++
		}
	}
	return n
}

// ToWake are the groups that can act on a change of the lock, of the groups naming it: those
// holding a slot (one may be stale, or its group gone), those naming it whose current run it does
// not list (they list it: the lock was created again, or named by an edit; not a group being
// deleted, which records no run: its currentRun may name a pod long ended, and counted as a slot
// taken it would keep a waiter asleep; waking one more waiter than needed costs one pass that
// decides with the pods in view, through room), and, when it has free
// slots, as many of its waiters as it has free slots, in the order of their claims, since a later
// waiter could not take a slot that an earlier one claims (room). With a thousand groups waiting
// on one lock, a slot's hand-off wakes a few, not a thousand.
func ToWake(lock v1alpha1.Lock, naming []v1alpha1.OaatGroup) []types.NamespacedName {
	var wake []types.NamespacedName
	add := func(key types.NamespacedName) {
		if !slices.Contains(wake, key) {
			wake = append(wake, key)
		}
	}
	for _, h := range lock.LockHolders() {
		add(types.NamespacedName{Namespace: v1alpha1.HolderNamespace(h, lock), Name: h.Group})
	}
	free := Slots(lock) - len(lock.LockHolders())
	var waiting []Claim
	for i := range naming {
		g := &naming[i]
		if cr := g.Status.CurrentRun; cr != nil && g.DeletionTimestamp.IsZero() && !Lists(lock, g.Namespace, g.Name, cr.PodName) {
			add(types.NamespacedName{Namespace: g.Namespace, Name: g.Name})
			free--
		}
		if Waits(g) {
			waiting = append(waiting, Claim{Since: g.Status.LockWait.Since.Time, Namespace: g.Namespace, Group: g.Name})
		}
	}
	slices.SortFunc(waiting, func(a, b Claim) int {
		switch {
		case a.Before(b):
			return -1
		case b.Before(a):
			return 1
		}
		return 0
	})
	for _, c := range waiting[:max(min(free, len(waiting)), 0)] {
		add(types.NamespacedName{Namespace: c.Namespace, Name: c.Group})
	}
	return wake
}
