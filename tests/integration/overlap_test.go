package integration

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// labelTestPod marks the pods a test creates itself (rogue pods): they are not the operator's,
// so the overlap watcher leaves them out.
const labelTestPod = "integration.oaat.io/test-pod"

// overlap is a moment at which two or more live pods of one group coexisted.
type overlap struct {
	Group string
	Pods  []string
	At    time.Time
}

func (o overlap) String() string {
	return fmt.Sprintf("%s: group %s had live pods %v", o.At.Format(time.RFC3339Nano), o.Group, o.Pods)
}

// overlapWatcher follows the watch events of the pods of a namespace that carry an OaatGroup's
// label, in order: a pod is live from ADDED until it reaches phase Succeeded or Failed or is
// DELETED. It records every event after which a group has two or more live pods.
type overlapWatcher struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	live     map[string]map[types.UID]string // group → live pod UID → pod name
	overlaps []overlap
	err      error
}

// podWatcher watches the pods of a namespace that carry an OaatGroup's label.
type podWatcher struct{ namespace string }

func (w podWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	options.LabelSelector = v1alpha1.LabelGroup
	return clientset.CoreV1().Pods(w.namespace).Watch(ctx, options)
}

func startOverlapWatcher(namespace string) *overlapWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	// The namespace is new: the watch starts from a list so that no event is missed.
	list, err := clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelGroup})
	Expect(err).NotTo(HaveOccurred())
	Expect(list.Items).To(BeEmpty())
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, podWatcher{namespace: namespace})
	Expect(err).NotTo(HaveOccurred())

	w := &overlapWatcher{cancel: cancel, done: make(chan struct{}), live: map[string]map[types.UID]string{}}
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					if ctx.Err() != nil {
						return
					}
					w.fail(fmt.Errorf("the pod watch of namespace %s closed early", namespace))
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
	group := pod.Labels[v1alpha1.LabelGroup]
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live[group] == nil {
		w.live[group] = map[types.UID]string{}
	}
	switch ev.Type {
	case watch.Added, watch.Modified:
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			delete(w.live[group], pod.UID)
			return
		}
		w.live[group][pod.UID] = pod.Name
	case watch.Deleted:
		delete(w.live[group], pod.UID)
		return
	default:
		return
	}
	if len(w.live[group]) >= 2 {
		names := make([]string, 0, len(w.live[group]))
		for _, name := range w.live[group] {
			names = append(names, name)
		}
		sort.Strings(names)
		w.overlaps = append(w.overlaps, overlap{Group: group, Pods: names, At: time.Now()})
	}
}

func (w *overlapWatcher) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// stop stops the watcher and returns the overlaps it saw; it fails the test if the watch broke,
// since then it may have missed one.
func (w *overlapWatcher) stop() []overlap {
	w.cancel()
	Eventually(w.done, 10*time.Second).Should(BeClosed())
	w.mu.Lock()
	defer w.mu.Unlock()
	Expect(w.err).NotTo(HaveOccurred(), "the overlap watcher did not see every pod event")
	return w.overlaps
}
