package perfkit

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// PodLife is the lifetime of one pod as a watch saw it. The times Seen* are this process's clock
// when the event arrived: unlike the API's timestamps, which have whole seconds, they resolve
// milliseconds, and on one machine they trail the API server by the watch's delivery only.
type PodLife struct {
	Namespace, Name string
	UID             types.UID
	// Group, Item and Run are the OaatGroup, item and run number of an item pod; JobName the
	// Job of a Job's pod.
	Group, Item, Run, JobName string
	// Created is the API's creationTimestamp.
	Created time.Time
	// SeenCreated is when the first event of the pod arrived.
	SeenCreated time.Time
	// SeenEnded is when the pod was first seen Succeeded, Failed or gone; zero while it lives.
	SeenEnded time.Time
	// FinishedAt is the latest finishedAt of its terminated containers (whole seconds, which is
	// what an OaatGroup's status records); zero if none terminated.
	FinishedAt time.Time
	// Phase is the last phase seen; Deleted says the pod was deleted.
	Phase   corev1.PodPhase
	Deleted bool
}

// Live reports whether the pod had not ended when last seen.
func (p *PodLife) Live() bool { return p.SeenEnded.IsZero() }

// PodRecorder records the lifetime of every pod of a watch, and feeds the events of the pods that
// carry an OaatGroup's label to an optional OverlapTracker, which checks that no group has two
// live pods. Safe for concurrent use.
type PodRecorder struct {
	tracker *support.OverlapTracker

	mu    sync.Mutex
	pods  map[types.UID]*PodLife
	order []*PodLife
}

// NewPodRecorder returns a recorder that also feeds tracker, if not nil.
func NewPodRecorder(tracker *support.OverlapTracker) *PodRecorder {
	return &PodRecorder{tracker: tracker, pods: map[types.UID]*PodLife{}}
}

// Observe takes one watch event.
func (r *PodRecorder) Observe(ev watch.Event) error {
	now := time.Now()
	if ev.Type == watch.Error {
		return fmt.Errorf("pod watch error: %v", ev.Object)
	}
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	if r.tracker != nil && pod.Labels[v1alpha1.LabelGroup] != "" {
		_ = r.tracker.Observe(ev) // only ERROR events are errors
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pods[pod.UID]
	if p == nil {
		p = &PodLife{
			Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			Group: pod.Labels[v1alpha1.LabelGroup], Item: pod.Annotations[v1alpha1.AnnotationItem],
			Run: pod.Labels[v1alpha1.LabelRun], JobName: pod.Labels["batch.kubernetes.io/job-name"],
			Created: pod.CreationTimestamp.Time, SeenCreated: now,
		}
		r.pods[pod.UID] = p
		r.order = append(r.order, p)
	}
	p.Phase = pod.Status.Phase
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(p.FinishedAt) {
			p.FinishedAt = t.FinishedAt.Time
		}
	}
	if ev.Type == watch.Deleted {
		p.Deleted = true
	}
	if p.SeenEnded.IsZero() && (ev.Type == watch.Deleted || podbuild.Terminal(pod)) {
		p.SeenEnded = now
	}
	return nil
}

// Pods returns copies of the lifetimes of the pods of namespace seen so far, in the order they
// were first seen.
func (r *PodRecorder) Pods(namespace string) []PodLife {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []PodLife
	for _, p := range r.order {
		if p.Namespace == namespace {
			out = append(out, *p)
		}
	}
	return out
}

// ByGroup sorts pod lifetimes by group, each group's in the order they were seen.
func ByGroup(pods []PodLife) map[string][]PodLife {
	out := map[string][]PodLife{}
	for _, p := range pods {
		out[p.Group] = append(out[p.Group], p)
	}
	for _, ps := range out {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].SeenCreated.Before(ps[j].SeenCreated) })
	}
	return out
}

// podWatcher starts watches of the pods of one namespace with a label selector.
type podWatcher struct {
	clientset kubernetes.Interface
	namespace string
	selector  string
}

func (w podWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.LabelSelector = w.selector
	return w.clientset.CoreV1().Pods(w.namespace).Watch(ctx, opts)
}

// RecordPods lists the pods of namespace (all namespaces if empty) that match selector, gives
// them to the recorder as ADDED, then follows their watch from the list's resource version until
// the returned watch is stopped.
func RecordPods(ctx context.Context, clientset kubernetes.Interface, namespace, selector string, rec *PodRecorder) (*support.Watch, error) {
	list, err := clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing pods to record: %w", err)
	}
	for i := range list.Items {
		_ = rec.Observe(watch.Event{Type: watch.Added, Object: &list.Items[i]}) // ADDED is never an error
	}
	w := podWatcher{clientset: clientset, namespace: namespace, selector: selector}
	return support.Follow(ctx, list.ResourceVersion, w, "pod watch ("+selector+")", rec.Observe)
}
