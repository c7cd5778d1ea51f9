// Package support holds what the integration suite (tests/integration), the end-to-end suite
// (tests/e2e) and the OLM install suite (tests/olminstall) share: the tracker of live pods that
// checks the operator's invariant (at most one live pod per OaatGroup) from pod watch events, the
// watch that feeds it, helpers that read an OaatGroup's status and pods, the check that the
// binaries a suite runs exist and the wrapper of the local cluster (hack/cluster/cluster.sh). The
// child processes a suite runs outside the cluster are hack/devkit's, which the hack/ tools use
// too.
package support

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// GroupKey names an OaatGroup across namespaces.
type GroupKey struct {
	// Namespace is the namespace of the group and its pods.
	Namespace string
	// Group is the group's name, the value of its pods' v1alpha1.LabelGroup.
	Group string
}

// String returns namespace/group.
func (k GroupKey) String() string {
	return k.Namespace + "/" + k.Group
}

// Overlap is a moment at which two or more live pods of one group coexisted.
type Overlap struct {
	// Group is the group whose pods coexisted.
	Group GroupKey
	// Pods are the names of the group's live pods, sorted.
	Pods []string
	// At is when the tracker observed the event that made the overlap.
	At time.Time
}

// String describes the overlap for a failure message.
func (o Overlap) String() string {
	return fmt.Sprintf("%s: group %s had live pods %v", o.At.Format(time.RFC3339Nano), o.Group, o.Pods)
}

// PodRecord is a pod of a group as the tracker first saw it, and how it ended.
type PodRecord struct {
	// Name and UID are the pod's.
	Name string
	UID  types.UID
	// Item is the item the pod runs (its v1alpha1.AnnotationItem).
	Item string
	// Run is the run number of the pod (its v1alpha1.LabelRun).
	Run string
	// Created is the pod's creationTimestamp.
	Created metav1.Time
	// Seen is when the tracker saw the pod's first event.
	Seen time.Time
	// Ended is when the tracker saw the pod terminal or gone; zero while it is live.
	Ended time.Time
	// Phase is the last phase seen.
	Phase corev1.PodPhase
}

// String describes the pod for a failure report.
func (r PodRecord) String() string {
	return fmt.Sprintf("%s (item %q, run %s, created %s, phase %s)", r.Name, r.Item, r.Run,
		r.Created.Format(time.RFC3339), r.Phase)
}

// OverlapTrackerOptions configure an OverlapTracker.
type OverlapTrackerOptions struct {
	// TestPodLabel marks the pods a test creates itself (rogue pods): the tracker leaves out every
	// pod that carries it with a non-empty value, since such a pod coexists with the group's run
	// by construction. Empty, no pod is left out.
	TestPodLabel string
	// KeepHistory makes the tracker keep, per group, a record of every pod in the order the pods
	// appeared, for PodsOf and Describe.
	KeepHistory bool
	// Clock stamps overlaps and the ends of pods; nil means the real clock.
	Clock clock.PassiveClock
	// Key, when not nil, names the set a pod counts in instead of its group (for example the
	// OaatLock its group names, to follow the live pods of all the groups sharing it); pods for
	// which it returns "" are left out.
	Key func(*corev1.Pod) string
	// AcrossNamespaces counts the pods of every namespace in one set per key (the pods of the
	// groups of several namespaces sharing a ClusterOaatLock): the set's namespace is "".
	AcrossNamespaces bool
}

// OverlapTracker follows, in order, the watch events of pods that carry an OaatGroup's label
// (v1alpha1.LabelGroup) and records every moment at which a group has two or more live pods. A
// pod is live from the event that shows it (ADDED, or MODIFIED for a pod the tracker had not
// seen) until it reaches phase Succeeded or Failed or is DELETED: a pod with a deletionTimestamp
// still runs, exactly as the operator must count it. Groups are told apart by namespace and name.
//
// It does no I/O: WatchPods feeds it from the API server, a unit test with hand-made events. It
// is safe for concurrent use.
type OverlapTracker struct {
	testPodLabel string
	clock        clock.PassiveClock
	key          func(*corev1.Pod) string
	acrossNS     bool

	mu       sync.Mutex
	live     map[GroupKey]map[types.UID]string // live pod UID → pod name
	maxLive  map[GroupKey]int
	history  map[GroupKey][]*PodRecord // nil unless KeepHistory
	byUID    map[types.UID]*PodRecord
	overlaps []Overlap
}

// NewOverlapTracker returns a tracker that has seen no pod.
func NewOverlapTracker(opts OverlapTrackerOptions) *OverlapTracker {
	t := &OverlapTracker{
		testPodLabel: opts.TestPodLabel,
		clock:        opts.Clock,
		key:          opts.Key,
		acrossNS:     opts.AcrossNamespaces,
		live:         map[GroupKey]map[types.UID]string{},
		maxLive:      map[GroupKey]int{},
	}
	if t.clock == nil {
		t.clock = clock.RealClock{}
	}
	if opts.KeepHistory {
		t.history = map[GroupKey][]*PodRecord{}
		t.byUID = map[types.UID]*PodRecord{}
	}
	return t
}

// NewLockTracker returns a tracker whose one set is the lock: the pods of the groups naming it,
// which must never be more than its capacity at once. Pods of other groups are left out, and so
// are those carrying testPodLabel (when not empty).
func NewLockTracker(lock string, groups []string, testPodLabel string) *OverlapTracker {
	return NewOverlapTracker(OverlapTrackerOptions{
		TestPodLabel: testPodLabel,
		Key: func(pod *corev1.Pod) string {
			if slices.Contains(groups, pod.Labels[v1alpha1.LabelGroup]) {
				return lock
			}
			return ""
		},
	})
}

// NewClusterLockTracker returns a tracker whose one set, of namespace "", is the ClusterOaatLock:
// the pods of the groups naming it, of whatever namespace, which must never be more than its
// capacity at once. Pods of other groups are left out, and so are those carrying testPodLabel.
func NewClusterLockTracker(lock string, groups []GroupKey, testPodLabel string) *OverlapTracker {
	return NewOverlapTracker(OverlapTrackerOptions{
		TestPodLabel:     testPodLabel,
		AcrossNamespaces: true,
		Key: func(pod *corev1.Pod) string {
			if slices.Contains(groups, GroupKey{Namespace: pod.Namespace, Group: pod.Labels[v1alpha1.LabelGroup]}) {
				return lock
			}
			return ""
		},
	})
}

// Observe takes the next watch event. It returns an error for an ERROR event: the watch that
// sent it may have missed pod events, so the tracker may have missed an overlap. Events of other
// objects than pods, and pods that carry the test pod label, are ignored.
func (t *OverlapTracker) Observe(ev watch.Event) error {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	case watch.Error:
		return fmt.Errorf("pod watch error: %v", ev.Object)
	case watch.Bookmark:
		return nil
	}
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok || (t.testPodLabel != "" && pod.Labels[t.testPodLabel] != "") {
		return nil
	}
	key := GroupKey{Namespace: pod.Namespace, Group: pod.Labels[v1alpha1.LabelGroup]}
	if t.acrossNS {
		key.Namespace = ""
	}
	if t.key != nil {
		if key.Group = t.key(pod); key.Group == "" {
			return nil
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live[key] == nil {
		t.live[key] = map[types.UID]string{}
	}
	rec := t.record(key, pod)
	if ev.Type == watch.Deleted || ended(pod) {
		delete(t.live[key], pod.UID)
		if rec != nil && rec.Ended.IsZero() {
			rec.Ended = t.clock.Now()
		}
		return nil
	}
	t.live[key][pod.UID] = pod.Name
	t.maxLive[key] = max(t.maxLive[key], len(t.live[key]))
	if len(t.live[key]) >= 2 {
		names := make([]string, 0, len(t.live[key]))
		for _, name := range t.live[key] {
			names = append(names, name)
		}
		sort.Strings(names)
		t.overlaps = append(t.overlaps, Overlap{Group: key, Pods: names, At: t.clock.Now()})
	}
	return nil
}

// record returns the history record of the pod, made on its first event, with the phase of this
// one; nil without history.
func (t *OverlapTracker) record(key GroupKey, pod *corev1.Pod) *PodRecord {
	if t.history == nil {
		return nil
	}
	rec := t.byUID[pod.UID]
	if rec == nil {
		rec = &PodRecord{
			Name: pod.Name, UID: pod.UID, Item: pod.Annotations[v1alpha1.AnnotationItem],
			Run: pod.Labels[v1alpha1.LabelRun], Created: pod.CreationTimestamp, Seen: t.clock.Now(),
		}
		t.byUID[pod.UID] = rec
		t.history[key] = append(t.history[key], rec)
	}
	rec.Phase = pod.Status.Phase
	return rec
}

// Overlaps returns every overlap seen, in the order seen.
func (t *OverlapTracker) Overlaps() []Overlap {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Overlap(nil), t.overlaps...)
}

// MaxLive returns the most live pods the group had at once: 0 if the tracker never saw one live,
// 1 if its pods never overlapped.
func (t *OverlapTracker) MaxLive(namespace, group string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maxLive[GroupKey{Namespace: namespace, Group: group}]
}

// OverlapsIn returns the overlaps seen in the namespace, in the order seen.
func (t *OverlapTracker) OverlapsIn(namespace string) []Overlap {
	t.mu.Lock()
	defer t.mu.Unlock()
	var found []Overlap
	for _, o := range t.overlaps {
		if o.Group.Namespace == namespace {
			found = append(found, o)
		}
	}
	return found
}

// PodsOf returns copies of the records of the group's pods, in the order they appeared; none
// without KeepHistory.
func (t *OverlapTracker) PodsOf(namespace, group string) []PodRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	recs := t.history[GroupKey{Namespace: namespace, Group: group}]
	out := make([]PodRecord, 0, len(recs))
	for _, r := range recs {
		out = append(out, *r)
	}
	return out
}

// Describe lists what the tracker saw in the namespace, for a failure report: the pods of each
// group (with KeepHistory) and the overlaps.
func (t *OverlapTracker) Describe(namespace string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var groups []string
	for key := range t.history {
		if key.Namespace == namespace {
			groups = append(groups, key.Group)
		}
	}
	sort.Strings(groups)
	var b strings.Builder
	for _, group := range groups {
		fmt.Fprintf(&b, "group %s:\n", group)
		for _, r := range t.history[GroupKey{Namespace: namespace, Group: group}] {
			ended := "live"
			if !r.Ended.IsZero() {
				ended = "ended " + r.Ended.Format(time.RFC3339Nano)
			}
			fmt.Fprintf(&b, "  %s, %s\n", r, ended)
		}
	}
	for _, o := range t.overlaps {
		if o.Group.Namespace == namespace {
			fmt.Fprintf(&b, "overlap: %s\n", o)
		}
	}
	return b.String()
}

// ended is the tracker's own reading of a pod that can no longer run a container: the kubelet
// (or kwok) has put it in a terminal phase, as the Kubernetes API defines them. The tracker does
// not call the operator's predicate for the same fact: an oracle that shares the predicate it
// checks would agree with its bugs. A pod being deleted whose phase is not terminal is live,
// unless it was deleted without a grace period (force-deleted, or never scheduled): the API server
// takes it as deleted, and only finalizers keep the object, as a Deleted event would have ended it.
func ended(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0 {
		return true
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return true
	case corev1.PodPending, corev1.PodRunning, corev1.PodUnknown:
	}
	return false
}

// Reactions are, for each pod of the group after the first, the time from the end of the pod
// before it to its first event, as the tracker saw both (KeepHistory): how long the operator took
// to start the next run once one ended.
func (t *OverlapTracker) Reactions(namespace, group string) []time.Duration {
	pods := t.PodsOf(namespace, group)
	var out []time.Duration
	for i := 1; i < len(pods); i++ {
		if prev := pods[i-1]; !prev.Ended.IsZero() {
			out = append(out, pods[i].Seen.Sub(prev.Ended))
		}
	}
	return out
}
