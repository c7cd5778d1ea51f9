package support

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// stopTimeout bounds how long Stop waits for the watch to end.
const stopTimeout = 10 * time.Second

// Watch follows, from a resource version, the events of a watch that a RetryWatcher restarts
// when it ends, and hands each to a function in order, until Stop. It records the first error:
// an ERROR event the function reports, or the watch ending before Stop.
type Watch struct {
	what   string
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

// Follow starts a RetryWatcher of watcher from resourceVersion (that of a list, so that no event
// is missed in between) and gives each event to handle, in order; an error handle returns is
// recorded (see Err). what names the watch in errors, e.g. "pod watch of all namespaces". ctx
// bounds nothing but its values: the watch runs until Stop.
func Follow(ctx context.Context, resourceVersion string, watcher cache.WatcherWithContext, what string,
	handle func(watch.Event) error) (*Watch, error) {
	watchCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rw, err := watchtools.NewRetryWatcherWithContext(watchCtx, resourceVersion, watcher)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("starting the %s: %w", what, err)
	}
	w := &Watch{what: what, cancel: cancel, done: make(chan struct{})}
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
						w.fail(fmt.Errorf("the %s closed early", what))
					}
					return
				}
				if err := handle(ev); err != nil {
					w.fail(err)
				}
			}
		}
	}()
	return w, nil
}

func (w *Watch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// Err returns why the watch may have missed events (an error of the handler, such as for an
// ERROR event, or the watch ended before Stop), nil when it has not.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop ends the watch and waits for it to end. It returns an error if the watch broke (see Err),
// since events may then have been missed, or if it did not end within 10 s.
func (w *Watch) Stop() error {
	w.cancel()
	select {
	case <-w.done:
	case <-time.After(stopTimeout):
		return fmt.Errorf("the %s did not stop", w.what)
	}
	return w.Err()
}

// PodWatch feeds an OverlapTracker with the watch events of the pods that carry an OaatGroup's
// label, until Stop.
type PodWatch struct {
	*Watch
	listed []string
}

// WatchPods lists the pods of the namespace (metav1.NamespaceAll for every namespace) that carry
// an OaatGroup's label, gives them to the tracker as ADDED events, then follows their watch events
// from the list's resource version with a RetryWatcher, so that no event is missed in between,
// and gives each to the tracker in order. ctx bounds the list only: the watch runs until Stop.
func WatchPods(ctx context.Context, clientset kubernetes.Interface, namespace string, tracker *OverlapTracker) (*PodWatch, error) {
	pods := clientset.CoreV1().Pods(namespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelGroup})
	if err != nil {
		return nil, fmt.Errorf("listing the pods to watch in %s: %w", describeNamespace(namespace), err)
	}
	w := &PodWatch{}
	for i := range list.Items {
		w.listed = append(w.listed, list.Items[i].Name)
		// An ADDED event is never an error.
		_ = tracker.Observe(watch.Event{Type: watch.Added, Object: &list.Items[i]})
	}
	w.Watch, err = Follow(ctx, list.ResourceVersion, podWatcher{pods: pods}, "pod watch of "+describeNamespace(namespace), tracker.Observe)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// podWatcher watches the pods that carry an OaatGroup's label, for a RetryWatcher.
type podWatcher struct {
	pods typedcorev1.PodInterface
}

// WatchWithContext starts a watch of the pods with the options of the RetryWatcher.
func (w podWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	options.LabelSelector = v1alpha1.LabelGroup
	return w.pods.Watch(ctx, options)
}

func describeNamespace(namespace string) string {
	if namespace == metav1.NamespaceAll {
		return "all namespaces"
	}
	return "namespace " + namespace
}

// Listed returns the names of the pods the initial list held, which the tracker got as ADDED.
func (w *PodWatch) Listed() []string {
	return w.listed
}
