package controllers

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
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

// untrackedHintTTL is how long untrackedPods remembers a removal of the finalizer: far longer than
// the watch takes to bring the patched pod into the cache. Past it, a pass that still sees the
// finalizer patches again, which does no harm (the removal is idempotent).
const untrackedHintTTL = time.Minute

// untrackedPods remembers the pods whose finalizer oaat.io/run-tracking this manager removed, by
// UID, with the resourceVersion the cache showed them at and when: a pass that runs before the
// watch brought the patched pod (the group's own status write wakes one at once) sees the pod at
// that version still with the finalizer, and skips it rather than patching it again.
//
// It saves requests and decides nothing: the planner never reads it (planner.Plan.Untrack is made
// from the pods and the status in the cluster), and it only tells untrack whether to send a patch
// the plan asked for. Skipping is never wrong: the removal succeeded on that very pod (the UID),
// and nothing adds the finalizer to an existing pod (podbuild.Build sets it at the creation only).
// Not skipping is never wrong either, so its loss (a restart, a failover to another replica, the
// entry older than untrackedHintTTL) costs one repeated patch per pod, no other outcome: the patch
// deletes a value the list no longer holds, which leaves the finalizers as they are, or finds the
// pod gone (NotFound, which untrack takes as done).
type untrackedPods struct {
	removed expiringHints[types.UID, string]
}

// pending reports whether the finalizer of the pod, as the cache shows it, was removed already.
func (u *untrackedPods) pending(pod *corev1.Pod, now time.Time) bool {
	resourceVersion, ok := u.removed.get(pod.UID, now, untrackedHintTTL)
	return ok && resourceVersion == pod.ResourceVersion
}

// untracked notes the removal of the finalizer from the pod read at its resourceVersion, and
// forgets the removals older than untrackedHintTTL.
func (u *untrackedPods) untracked(uid types.UID, resourceVersion string, now time.Time) {
	u.removed.note(uid, resourceVersion, now, untrackedHintTTL)
}

// createdHintTTL is how long createdPods remembers a pod this manager created: far longer than the
// watch takes to bring it into the cache. Past it, a pass that still misses the pod reads it from
// the API server, as one that never had the hint does.
const createdHintTTL = 10 * time.Second

// createdPods remembers, per group, the pod this manager created last and when, until the cache
// shows it: the pass that follows a start (the group's own status write wakes it at once, and the
// pod's creation and the removal of the last run's finalizer are made at the same time,
// alongside) often runs before the watch brought the new pod. Rather than read that pod from the
// API server, the pass looks again after cacheLagRetry (gather, errCacheLagsCreate); the pod's
// watch event, which comes within milliseconds, brings it sooner.
//
// It saves requests and decides nothing: a pass that has the hint decides nothing at all, and
// one that lacks it (a restart, a failover, the hint older than createdHintTTL, the pod seen in
// the cache since) reads the pod from the API server, as it did before the hint.
type createdPods struct {
	pods expiringHints[types.NamespacedName, string]
}

// awaited reports whether pod is the group's pod that this manager created less than
// createdHintTTL ago and that the cache has not shown yet.
func (c *createdPods) awaited(group types.NamespacedName, pod string, now time.Time) bool {
	name, ok := c.pods.get(group, now, createdHintTTL)
	return ok && name == pod
}

// created notes that this manager created the group's pod at now, and forgets the creations
// older than createdHintTTL.
func (c *createdPods) created(group types.NamespacedName, pod string, now time.Time) {
	c.pods.note(group, pod, now, createdHintTTL)
}

// seen forgets the group's creation: the cache shows its pod (or the group is gone).
func (c *createdPods) seen(group types.NamespacedName) {
	c.pods.forget(group)
}

// expiringHints is what a hint remembers, by key: a value, each noted at a time and valid for a
// time to live that its reader gives; safe for concurrent use, and ready to use as its zero value.
type expiringHints[K comparable, V any] struct {
	mu sync.Mutex
	at map[K]expiringHint[V]
}

type expiringHint[V any] struct {
	value V
	at    time.Time
}

// get returns the value noted under key less than ttl before now.
func (h *expiringHints[K, V]) get(key K, now time.Time, ttl time.Duration) (V, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.at[key]
	if !ok || now.Sub(e.at) >= ttl {
		var zero V
		return zero, false
	}
	return e.value, true
}

// note notes value under key at now, and forgets the values noted ttl or more before now.
func (h *expiringHints[K, V]) note(key K, value V, now time.Time, ttl time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.at == nil {
		h.at = map[K]expiringHint[V]{}
	}
	for k, e := range h.at {
		if now.Sub(e.at) >= ttl {
			delete(h.at, k)
		}
	}
	h.at[key] = expiringHint[V]{value: value, at: now}
}

// forget forgets what is noted under key.
func (h *expiringHints[K, V]) forget(key K) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.at, key)
}
