// Package duepriority orders the OaatGroup controller's work queue: how long a group has had work
// due, read from its persisted status (and its current run's pod), becomes the priority it is
// queued with, so that after a start or a failover the groups that have waited longest are
// reconciled first and a group due now never waits behind groups that are not due.
//
// The choice: controller-runtime's priority queue (on by default since v0.22, and the queue the
// controller uses here) rather than an ordering of our own. It already hands out the highest
// priority first, FIFO within a priority, merges a key's adds by the highest priority and the
// earliest time, and never hands one key to two workers; what it lacks is a priority that means
// something to this operator. By default every object of the informers' initial list is queued at
// handler.LowPriority in list order, and every later change at 0: after a restart, the echoes of
// the first groups' own writes (their status, their new pod's binding and status) overtook every
// group not yet reconciled, which is what made the tail of a resume long. The controller's event
// handlers and its requeues use Priority instead, computed from the same inputs the queue key
// stands for.
//
// The levels, highest first:
//   - Due(since): the group has work due since some instant (an item eligible and nothing
//     running, its run's pod ended, its run past spec.runTimeout, its spec changed). Levels grow
//     with how long it has been due, on a logarithmic scale of four levels per doubling (a group
//     due for 40 s goes before one due for 30 s, one due for 2 h before one due for 1 h); FIFO
//     within a level. The queue exports its depth per priority, so the levels are few (at most
//     maxLevel+1 of them).
//   - Unknown (0): a change whose consequence the handler cannot tell (an OaatType, a ConfigMap,
//     a lock, a group not in the cache yet).
//   - Idle (handler.LowPriority): the status says nothing is due: the group's pod runs, or its
//     items wait for a time still to come, a lock or a change. Most events of a running group,
//     the echoes of the operator's own writes among them, are idle.
//
// The status is what the last reconcile wrote: nextEligibleAt of an item is when its wait ends,
// and an item without a wait or a reason was eligible at that write. An error of this estimate
// costs an order, never a run: the reconcile itself decides from a fresh snapshot.
package duepriority

import (
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

const (
	// Idle is the priority of a group with nothing due; controller-runtime's handler.LowPriority,
	// the level its handlers give to objects of the initial list.
	Idle = -100
	// Unknown is the priority of a change whose consequence cannot be told from the group's
	// status: the queue's default.
	Unknown = 0
	// dueBase is the priority of a group due now, above every other level.
	dueBase = 1
	// levelsPerDoubling is how many levels one doubling of the time due spans.
	levelsPerDoubling = 4
	// maxLevel caps the levels: due for one week and more share the highest.
	maxLevel = 77 // ceil(4 * log2(7 * 24 * 3600))
)

// Due is the priority of a group that has had work due for the duration since: dueBase for less
// than a second, then four levels per doubling, capped at dueBase+maxLevel.
func Due(since time.Duration) int {
	if since < time.Second {
		return dueBase
	}
	level := 1 + int(math.Floor(levelsPerDoubling*math.Log2(since.Seconds())))
	return dueBase + min(level, maxLevel)
}

// Priority is the priority to queue group with at now. run is the pod of the group's current run
// as the cache holds it, nil when there is no current run or the cache does not hold its pod;
// runGone says that run's pod is known to be gone (a delete event).
func Priority(group *v1alpha1.OaatGroup, run *corev1.Pod, runGone bool, now time.Time) int {
	since, due := DueSince(group, run, runGone, now)
	if !due {
		return Idle
	}
	return Due(now.Sub(since))
}

// DueSince reports whether group has work due at now, and since when. See the package's
// documentation for what is due; run and runGone are as for Priority.
func DueSince(group *v1alpha1.OaatGroup, run *corev1.Pod, runGone bool, now time.Time) (time.Time, bool) {
	if !group.DeletionTimestamp.IsZero() {
		return time.Time{}, false
	}
	st := &group.Status
	if group.Generation != st.ObservedGeneration {
		return now, true // a spec the status does not reflect yet
	}
	if cr := st.CurrentRun; cr != nil {
		return runDueSince(group, cr, run, runGone, now)
	}
	earliest, due := time.Time{}, false
	consider := func(t time.Time) {
		if !t.After(now) && (!due || t.Before(earliest)) {
			earliest, due = t, true
		}
	}
	for _, item := range group.Spec.OaatItems {
		if !slices.ContainsFunc(st.Items, func(it v1alpha1.ItemStatus) bool { return it.Name == item }) {
			consider(group.CreationTimestamp.Time) // an item the status has not listed yet
		}
	}
	for i := range st.Items {
		it := &st.Items[i]
		switch {
		case it.NextEligibleAt != nil:
			consider(it.NextEligibleAt.Time)
		case it.WaitReason == "":
			// Eligible when the status was written and not started since: the operator was not
			// running, or another item ran then.
			consider(latest(group.CreationTimestamp.Time, it.LastSuccess, it.LastFailure, it.LastStarted))
		}
	}
	if st.NextRoundAt != nil {
		consider(st.NextRoundAt.Time)
	}
	return earliest, due
}

// NeverCreated is the priority of a group whose current run's pod was never created: the operator
// stopped between the run's intent and the pod's create, and the synced cache lacks the pod. The
// run was due when the group's previous run ended (the latest end of any item's run), or at the
// run's intent if none ended before it; counting from the intent alone ranked such a group, due
// since its previous pod ended, behind groups due for less. A group that idled between
// its previous run and this run's intent is ranked as due since that run's end: an estimate that
// moves the few groups caught by a stop forward, never a run.
func NeverCreated(group *v1alpha1.OaatGroup, now time.Time) int {
	cr := group.Status.CurrentRun
	if cr == nil || !group.DeletionTimestamp.IsZero() {
		return Priority(group, nil, false, now)
	}
	since := group.CreationTimestamp.Time
	for i := range group.Status.Items {
		since = latest(since, group.Status.Items[i].LastSuccess, group.Status.Items[i].LastFailure)
	}
	if cr.StartedAt.Time.Before(since) {
		since = cr.StartedAt.Time
	}
	return Due(now.Sub(since))
}

// runDueSince is DueSince for a group with a current run: due once its pod ended or went, or its
// run outlived its run timeout (spec.runTimeout, or its item's learned one), or a stop of it
// was decided.
func runDueSince(group *v1alpha1.OaatGroup, cr *v1alpha1.CurrentRun, run *corev1.Pod, runGone bool, now time.Time) (time.Time, bool) {
	switch {
	case cr.StopReason != "", runGone:
		return now, true
	case run != nil && run.Name == cr.PodName && podbuild.Terminal(run):
		return podEnded(run, now), true
	case run != nil && run.Name == cr.PodName && !run.DeletionTimestamp.IsZero():
		return now, true
	}
	if timeout, err := groupspec.ItemRunTimeout(group, cr.Item); err == nil && timeout > 0 {
		if deadline := cr.StartedAt.Add(timeout); !deadline.After(now) {
			return deadline, true
		}
	}
	return time.Time{}, false
}

// podEnded is when a terminal pod ended (podbuild.Ended), now when no container says so or it
// says a time still to come.
func podEnded(pod *corev1.Pod, now time.Time) time.Time {
	if ended, ok := podbuild.Ended(pod); ok && !ended.After(now) {
		return ended
	}
	return now
}

// latest is the latest of base and the times that are set.
func latest(base time.Time, times ...*metav1.Time) time.Time {
	for _, t := range times {
		if t != nil && t.After(base) {
			base = t.Time
		}
	}
	return base
}
