package controllers

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// What the group reconciler keeps in its process, beside the cluster: the expectations of its own
// writes (expectations), the pace of its retries of a status the API server refuses
// (statusRefusals), the forecasts it makes off the reconcile path (forecaster.go), and what the
// sinks of the groups' transitions acknowledged (notifier.go). Each saves work or paces it and
// decides nothing the cluster does not say: lost with the process (a restart, a failover), it
// costs a request, a forecast or a CloudEvent made again, no other outcome.

// expectations are the writes of this manager that its cache has not shown yet, in the way of
// kueue's pkg/util/expectations: a write notes what it expects (expectCreate, expectUntrack), the
// pod watch's event handler observes every pod event (observe), which satisfies what it shows,
// and a pass takes what is still pending before it reads the cache, and asks it before it decides
// from what it read (pending). Safe for concurrent use; ready as its zero value.
//
//   - The pod of a new run: the pass that follows a start (the group's own status write wakes it
//     at once) often runs before the watch brought the new pod. Rather than decide from a cache
//     without it, or read it from the API server, the pass looks again after cacheLagRetry; the
//     pod's event, which comes within milliseconds, satisfies the expectation and queues the
//     group sooner.
//   - The removal of the finalizer oaat.io/run-tracking from a pod: until the watch brings the
//     patched pod, the cache shows it at the version read before the patch, still with the
//     finalizer; untrack skips it rather than patching it again. Any event of the pod at another
//     version (or its deletion) satisfies the expectation.
//
// An expectation that no event satisfies (a watch that lost the object, created and deleted
// between two lists) is dropped after its bound (createBound, untrackBound), far longer than a
// watch takes; a pass then does as one without it: reads the run's pod from the API server, or
// sends the patch again, which does no harm (the removal is idempotent). The tag longexpectations
// makes both bounds an hour, so that a test shows the events alone satisfy the expectations.
type expectations struct {
	mu sync.Mutex
	// creates are the pods created, by group.
	creates map[types.NamespacedName]expected
	// untracks are the resourceVersions the pods were read at before their finalizer was removed,
	// by pod UID.
	untracks map[types.UID]expected
}

// expected is what an expectation waits for, and when it was noted.
type expected struct {
	value string
	at    time.Time
}

// expectCreate notes that this manager created the group's pod at now.
func (e *expectations) expectCreate(group types.NamespacedName, pod string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.creates = noted(e.creates, group, expected{value: pod, at: now}, createBound)
}

// expectUntrack notes that this manager removed the finalizer at now from the pod it read at
// resourceVersion.
func (e *expectations) expectUntrack(pod types.UID, resourceVersion string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.untracks = noted(e.untracks, pod, expected{value: resourceVersion, at: now}, untrackBound)
}

// observe satisfies what an event of the pod shows: the creation of the pod of its group, the
// removal of its finalizer (another version of the pod, or its deletion).
func (e *expectations) observe(pod *corev1.Pod, deleted bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if group, ok := pod.Labels[v1alpha1.LabelGroup]; ok {
		key := types.NamespacedName{Namespace: pod.Namespace, Name: group}
		if c, ok := e.creates[key]; ok && c.value == pod.Name {
			delete(e.creates, key)
		}
	}
	if u, ok := e.untracks[pod.UID]; ok && (deleted || u.value != pod.ResourceVersion) {
		delete(e.untracks, pod.UID)
	}
}

// pending is what this manager's writes expected and no event had shown yet when a pass of a
// group began: the group's pod created and awaited, the versions read before a finalizer's
// removal (by pod UID), each within its bound. A pass takes it before it reads the cache and asks
// it, not the expectations, about what it read. The cache is updated before the event handlers
// run, so a pass that took it first reads a cache at least as new as what it says is missing; an
// event that comes during the pass satisfies an expectation, but the pass still holds what it
// read before that event (seen: a pass that had read a pod before the watch brought its patch,
// its expectation satisfied meanwhile, patched the pod again).
type pending struct {
	// create is the name of the group's pod awaited, empty if none.
	create string
	// untracks is nil while no removal is awaited, the common case.
	untracks map[types.UID]string
}

// pending returns the group's expectations not satisfied at now and within their bounds.
func (e *expectations) pending(group types.NamespacedName, now time.Time) pending {
	e.mu.Lock()
	defer e.mu.Unlock()
	var p pending
	if c, ok := e.creates[group]; ok && now.Sub(c.at) < createBound {
		p.create = c.value
	}
	for pod, u := range e.untracks {
		if now.Sub(u.at) < untrackBound {
			if p.untracks == nil {
				p.untracks = map[types.UID]string{}
			}
			p.untracks[pod] = u.value
		}
	}
	return p
}

// creating reports whether pod is the group's pod that this manager created and no event had
// shown.
func (p pending) creating(pod string) bool {
	return p.create != "" && p.create == pod
}

// untracking reports whether the pod, as the pass read it, is the version from which this
// manager removed the finalizer, and no event had shown the pod since.
func (p pending) untracking(pod *corev1.Pod) bool {
	read, ok := p.untracks[pod.UID]
	return ok && read == pod.ResourceVersion
}

// forget drops the expectations of a group that is gone.
func (e *expectations) forget(group types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.creates, group)
}

// noted is m with value under key, and without the values noted bound or more before it.
func noted[K comparable](m map[K]expected, key K, value expected, bound time.Duration) map[K]expected {
	if m == nil {
		m = map[K]expected{}
	}
	for k, e := range m {
		if value.at.Sub(e.at) >= bound {
			delete(m, k)
		}
	}
	m[key] = value
	return m
}

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
	if ready := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Reason != string(v1alpha1.ReasonStatusRejected) {
		s.forget(group)
	}
}

// forget drops the group's refusal: it is gone.
func (s *statusRefusals) forget(group types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.at, group)
}
