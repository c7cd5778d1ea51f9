package locks

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Request decides a group's request for the locks it names, for the run of item in pod: nil when
// the run may start (every lock lists the pod as the group's, and the group yields none), else its
// new status.lockWait. prev is its request so far: a new request for another pod keeps its place
// (since), so that a group whose next item changes while it waits (an OaatRun arrives) does not
// lose its turn. The request carries the group's priority as its locks honour it (Honoured), and
// stays promoted once a lock has passed it over PassLimit times.
//
// A group holding the grant of a lock while another lock does not list it yet yields that grant
// when a group before it in the one global order (Place) waits for that lock and is not listed
// by it: two groups naming two locks would otherwise each hold one grant and wait for the other
// (two locks' reconcilers can each see only one of the two requests for a moment). The yield is
// kept until the lock no longer lists the group; the group never starts while it yields a lock
// (the lock may be giving the slot away at that moment).
func Request(group *v1alpha1.OaatGroup, in Input, prev *v1alpha1.LockWait, item, pod string, now time.Time) *v1alpha1.LockWait {
	keys := slices.Sorted(slices.Values(group.Spec.LockKeys()))
	mine := Place{Since: now, Namespace: group.Namespace, Group: group.Name, Priority: Honoured(group, in)}
	if prev != nil {
		mine.Since = prev.Since.Time
	}
	promotedAt := promotion(group, in, prev, now)
	mine.Promoted = promotedAt != nil
	var missing, granted []string
	for _, key := range keys {
		if lock := in.Locks[key]; lock != nil && slices.ContainsFunc(lock.LockHolders(), func(h v1alpha1.LockHolder) bool {
			return h.GroupUID == string(group.UID) && h.Pod == pod
		}) {
			granted = append(granted, key)
			continue
		}
		missing = append(missing, key)
	}
	var yielded []string
	if len(missing) > 0 {
		for _, key := range granted {
			kept := prev != nil && prev.Pod == pod && slices.Contains(prev.Yielded, key)
			if kept || slices.ContainsFunc(in.Waiters, func(w Waiter) bool { return w.Before(mine) && w.wants(in.Locks[key]) }) {
				yielded = append(yielded, key)
			}
		}
	} else if prev != nil && prev.Pod == pod {
		// Every lock lists the pod: one whose grant was yielded is dropping it, or gave it again.
		for _, key := range prev.Yielded {
			if slices.Contains(granted, key) {
				yielded = append(yielded, key)
			}
		}
	}
	if len(missing) == 0 && len(yielded) == 0 {
		return nil
	}
	waitingFor := slices.Sorted(slices.Values(append(slices.Clone(missing), yielded...)))
	return &v1alpha1.LockWait{Since: metav1.NewTime(mine.Since), Locks: waitingFor, Item: item, Pod: pod, Yielded: yielded,
		Priority: mine.Priority, PromotedAt: promotedAt}
}
