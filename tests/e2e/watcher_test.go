//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// groupKey names a group across namespaces.
type groupKey struct {
	Namespace string
	Group     string
}

// overlap is a moment at which two or more live pods of one group coexisted.
type overlap struct {
	Group groupKey
	Pods  []string
	At    time.Time
}

func (o overlap) String() string {
	return fmt.Sprintf("%s: group %s/%s had live pods %v", o.At.Format(time.RFC3339Nano), o.Group.Namespace, o.Group.Group, o.Pods)
}

// podRecord is a pod of a group as the watcher first saw it, and how it ended.
type podRecord struct {
	Name    string
	UID     types.UID
	Item    string
	Run     string
	Created metav1.Time
	// Ended is when the watcher saw the pod terminal or gone; zero while it is live.
	Ended time.Time
	// Phase is the last phase seen.
	Phase corev1.PodPhase
}

func (r podRecord) String() string {
	return fmt.Sprintf("%s (item %q, run %s, created %s, phase %s)", r.Name, r.Item, r.Run,
		r.Created.Format(time.RFC3339), r.Phase)
}

// overlapWatcher follows, in order, the watch events of every pod of the cluster that carries an
// OaatGroup's label. A pod is live from the event that shows it until it reaches phase Succeeded
// or Failed or is DELETED: a pod with a deletionTimestamp still runs (kwok removes it soon
// after), exactly as the operator must count it. After every event the watcher records the groups
// that have two or more live pods. It also keeps, per group, every pod in the order they appeared.
//
// Pods that the tests create themselves (labelTestPod) are left out: a rogue pod coexists with the
// group's run by construction.
type overlapWatcher struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	live     map[groupKey]map[types.UID]string // live pod UID → pod name
	history  map[groupKey][]*podRecord
	byUID    map[types.UID]*podRecord
	overlaps []overlap
	failure  error
}

// podWatcher watches, in all namespaces, the pods that carry an OaatGroup's label.
type podWatcher struct{}

func (podWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	options.LabelSelector = v1alpha1.LabelGroup
	return clientset.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, options)
}

func startOverlapWatcher(ctx context.Context) *overlapWatcher {
	w := &overlapWatcher{
		done:    make(chan struct{}),
		live:    map[groupKey]map[types.UID]string{},
		history: map[groupKey][]*podRecord{},
		byUID:   map[types.UID]*podRecord{},
	}
	// The watch starts from a list, so that no event is missed in between.
	list, err := clientset.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelGroup})
	Expect(err).NotTo(HaveOccurred())
	for i := range list.Items {
		w.observe(watch.Event{Type: watch.Added, Object: &list.Items[i]})
	}
	watchCtx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	rw, err := watchtools.NewRetryWatcherWithContext(watchCtx, list.ResourceVersion, podWatcher{})
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer close(w.done)
		defer rw.Stop()
		for {
			select {
			case <-watchCtx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					if watchCtx.Err() == nil {
						w.fail(fmt.Errorf("the pod watch closed early"))
					}
					return
				}
				w.observe(ev)
			}
		}
	}()
	return w
}

func (w *overlapWatcher) observe(ev watch.Event) {
	if ev.Type == watch.Error {
		w.fail(fmt.Errorf("pod watch error: %v", ev.Object))
		return
	}
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok || pod.Labels[labelTestPod] != "" {
		return
	}
	key := groupKey{Namespace: pod.Namespace, Group: pod.Labels[v1alpha1.LabelGroup]}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live[key] == nil {
		w.live[key] = map[types.UID]string{}
	}
	rec := w.byUID[pod.UID]
	if rec == nil {
		rec = &podRecord{
			Name: pod.Name, UID: pod.UID, Item: pod.Annotations[v1alpha1.AnnotationItem],
			Run: pod.Labels[v1alpha1.LabelRun], Created: pod.CreationTimestamp,
		}
		w.byUID[pod.UID] = rec
		w.history[key] = append(w.history[key], rec)
	}
	rec.Phase = pod.Status.Phase
	switch ev.Type {
	case watch.Added, watch.Modified:
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			w.end(key, rec)
			return
		}
		w.live[key][pod.UID] = pod.Name
	case watch.Deleted:
		w.end(key, rec)
		return
	default:
		return
	}
	if len(w.live[key]) >= 2 {
		names := make([]string, 0, len(w.live[key]))
		for _, name := range w.live[key] {
			names = append(names, name)
		}
		sort.Strings(names)
		w.overlaps = append(w.overlaps, overlap{Group: key, Pods: names, At: time.Now()})
	}
}

func (w *overlapWatcher) end(key groupKey, rec *podRecord) {
	delete(w.live[key], rec.UID)
	if rec.Ended.IsZero() {
		rec.Ended = time.Now()
	}
}

func (w *overlapWatcher) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failure == nil {
		w.failure = err
	}
}

// err returns why the watcher may have missed events, nil when it has not.
func (w *overlapWatcher) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failure
}

// overlapsIn returns the overlaps seen in the namespace.
func (w *overlapWatcher) overlapsIn(namespace string) []overlap {
	w.mu.Lock()
	defer w.mu.Unlock()
	var found []overlap
	for _, o := range w.overlaps {
		if o.Group.Namespace == namespace {
			found = append(found, o)
		}
	}
	return found
}

// podsOf returns copies of the records of the group's pods, in the order they appeared.
func (w *overlapWatcher) podsOf(namespace, group string) []podRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	recs := w.history[groupKey{Namespace: namespace, Group: group}]
	out := make([]podRecord, 0, len(recs))
	for _, r := range recs {
		out = append(out, *r)
	}
	return out
}

// describe lists what the watcher saw in the namespace, for a failure report.
func (w *overlapWatcher) describe(namespace string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for key, recs := range w.history {
		if key.Namespace != namespace {
			continue
		}
		fmt.Fprintf(&b, "group %s:\n", key.Group)
		for _, r := range recs {
			ended := "live"
			if !r.Ended.IsZero() {
				ended = "ended " + r.Ended.Format(time.RFC3339Nano)
			}
			fmt.Fprintf(&b, "  %s, %s\n", r, ended)
		}
	}
	for _, o := range w.overlaps {
		if o.Group.Namespace == namespace {
			fmt.Fprintf(&b, "overlap: %s\n", o)
		}
	}
	return b.String()
}

// stop stops the watcher; it returns an error if the watch broke, since it may have missed events.
func (w *overlapWatcher) stop() error {
	w.cancel()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the overlap watcher did not stop")
	}
	return w.err()
}

// itemsOf returns the items of the records, in order.
func itemsOf(recs []podRecord) []string {
	items := make([]string, 0, len(recs))
	for _, r := range recs {
		items = append(items, r.Item)
	}
	return items
}
