package locks

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Priority among the groups waiting for a lock (spec.priority of a group, spec.maxPriority of a
// lock). A group's request carries one priority for all its locks, the smallest that any of them
// honours (Honoured), so that every lock orders the requests alike and the yield of Request keeps
// two groups naming two locks from waiting for each other. A lock serves the requests of higher
// priority first; it counts, in its status.passedOver, how often it granted a request that began
// to wait later before a request still waiting (passes). At PassLimit the request is promoted: the
// lock serves it before every request not promoted, and its group marks its request promoted
// (status.lockWait.promotedAt) so that its other locks do the same. The bound: a request is passed
// over at most PassLimit times by each lock it names.

// maxPassedOver is the most requests a lock lists as passed over (status.passedOver's MaxItems):
// while that many are listed, the lock honours no priority, and so passes no request over.
const maxPassedOver = 1000

// Honoured is the group's priority as its locks honour it: its spec.priority, at most the
// smallest spec.maxPriority of the locks it names that exist; 0 while one of them honours no
// priority because it lists maxPassedOver requests as passed over (honours), so that the yield of
// Request orders the requests as that lock does.
func Honoured(group *v1alpha1.OaatGroup, in Input) int32 {
	p := group.Spec.PriorityOrZero()
	for _, key := range group.Spec.LockKeys() {
		lock := in.Locks[key]
		switch {
		case lock == nil:
		case !honours(lock):
			return 0
		default:
			p = min(p, lock.Bounds().MaxPriorityOrZero())
		}
	}
	return max(p, 0)
}

// promotion is when the group's request was promoted: that of its previous request, or now
// when one of its locks lists that request as passed over PassLimit times; nil when it is not.
func promotion(group *v1alpha1.OaatGroup, in Input, prev *v1alpha1.LockWait, now time.Time) *metav1.Time {
	switch {
	case prev == nil:
		return nil
	case prev.PromotedAt != nil:
		return prev.PromotedAt
	case promotedBy(group, in, *prev):
		return ptr.To(metav1.NewTime(now))
	}
	return nil
}

// promotedBy reports whether one of the locks lists the group's request of that since as passed
// over PassLimit times.
func promotedBy(group *v1alpha1.OaatGroup, in Input, w v1alpha1.LockWait) bool {
	for _, key := range group.Spec.LockKeys() {
		lock := in.Locks[key]
		if lock != nil && QueueOf(lock).PassedOver(group.Namespace, group.Name, w) >= v1alpha1.PassLimit {
			return true
		}
	}
	return false
}

// Queue is a lock's queue as its status keeps it: the requests it passed over (status.passedOver),
// by their group and since, and whether it honours priority.
type Queue struct {
	lock    v1alpha1.Lock
	passed  map[passKey]int32
	honours bool
}

// passKey names a request in a lock's status.passedOver: its group and since.
type passKey struct {
	namespace, group string
	since            int64
}

// QueueOf is the lock's queue as its status keeps it. It honours priority while it lists fewer
// than maxPassedOver requests as passed over.
func QueueOf(lock v1alpha1.Lock) Queue {
	entries := lock.Queue().PassedOver
	q := Queue{lock: lock, passed: make(map[passKey]int32, len(entries)), honours: honours(lock)}
	for _, p := range entries {
		q.passed[passKey{passedNamespace(p, lock), p.Group, p.Since.UnixNano()}] = p.Count
	}
	return q
}

// honours reports whether the lock honours priority: it lists fewer than maxPassedOver requests as
// passed over.
func honours(lock v1alpha1.Lock) bool { return len(lock.Queue().PassedOver) < maxPassedOver }

// PassedOver is how many times the lock lists the request w of the group of that namespace and
// name as passed over; 0 when it does not list it.
func (q Queue) PassedOver(namespace, group string, w v1alpha1.LockWait) int32 {
	return q.passed[passKey{namespace, group, w.Since.UnixNano()}]
}

// passedNamespace is the namespace of the group of an entry of the lock's status.passedOver.
func passedNamespace(p v1alpha1.PassedOver, lock v1alpha1.Lock) string {
	if lock.GetNamespace() != "" {
		return lock.GetNamespace()
	}
	return p.Namespace
}

// Place is the place in the lock's queue of the request w of the group of that namespace and
// name: its priority, at most the lock's spec.maxPriority (none while the lock does not honour
// priority), promoted by its request or by the lock's own count.
func (q Queue) Place(namespace, group string, w *v1alpha1.LockWait) Place {
	p := Place{Since: w.Since.Time, Namespace: namespace, Group: group,
		Promoted: w.PromotedAt != nil || q.PassedOver(namespace, group, *w) >= v1alpha1.PassLimit}
	if q.honours {
		p.Priority = min(w.Priority, q.lock.Bounds().MaxPriorityOrZero())
	}
	return p
}

// passes decides the lock's new status.passedOver, once the holders include the grants: the
// entries of the requests that still wait and were not granted, those with a place in the queue (placed) counting the grants of this
// review to requests that began to wait later (in Waited order); the entries of namespaces the
// installation does not serve stay as they are. At most maxPassedOver are listed: those nearest to
// being served (waiting is in the queue's order); the lock then honours no priority, and so passes
// no request over, until fewer are listed.
func (r *Review) passes(in ReviewInput, q Queue, waiting []*Member, placed map[*Member]bool) {
	var out []v1alpha1.PassedOver
	for _, p := range in.Lock.Queue().PassedOver {
		if !serves(in, passedNamespace(p, in.Lock)) {
			out = append(out, p)
		}
	}
	var granted, still []*Member
	for _, m := range waiting {
		if r.holds(in, m) {
			granted = append(granted, m)
		} else {
			still = append(still, m)
		}
	}
	for _, m := range still {
		mine := Place{Since: m.Request.Since.Time, Namespace: m.Namespace, Group: m.Name}
		count := q.PassedOver(m.Namespace, m.Name, *m.Request)
		for _, g := range granted {
			if placed[m] && mine.Waited(Place{Since: g.Request.Since.Time, Namespace: g.Namespace, Group: g.Name}) < 0 {
				count++
			}
		}
		if count > 0 && len(out) < maxPassedOver {
			e := v1alpha1.PassedOver{Group: m.Name, Since: m.Request.Since, Count: count}
			if in.Lock.GetNamespace() == "" {
				e.Namespace = m.Namespace
			}
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b v1alpha1.PassedOver) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Group, b.Group))
	})
	r.PassedOver = out
}

// serves reports whether the installation that reviews serves the namespace (it watches all
// namespaces, or that one).
func serves(in ReviewInput, namespace string) bool {
	return len(in.Namespaces) == 0 || slices.Contains(in.Namespaces, namespace)
}
