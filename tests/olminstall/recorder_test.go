//go:build olminstall

package olminstall

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// transition is a change of an object's phase (or state) as a watch showed it.
type transition struct {
	At      time.Time
	Name    string
	Value   string // the new phase; "(deleted)" when the object was deleted
	Reason  string
	Message string
}

// phaseRecorder follows, through a watch, the objects of one resource in one namespace and
// records every change of a status field (status.phase of CSVs and InstallPlans, status.state of
// Subscriptions) with the time the watch delivered it.
type phaseRecorder struct {
	gvr       schema.GroupVersionResource
	namespace string
	field     []string

	watch *support.Watch

	mu          sync.Mutex
	last        map[string]string
	transitions []transition
}

type dynWatcher struct {
	gvr       schema.GroupVersionResource
	namespace string
}

func (w dynWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return dynClient.Resource(w.gvr).Namespace(w.namespace).Watch(ctx, options)
}

// startPhaseRecorder starts recording the field (a path under the object) of the resource's
// objects in the namespace.
func startPhaseRecorder(ctx context.Context, gvr schema.GroupVersionResource, namespace string, field ...string) *phaseRecorder {
	r := &phaseRecorder{gvr: gvr, namespace: namespace, field: field, last: map[string]string{}}
	list, err := dynClient.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	for i := range list.Items {
		r.observe(watch.Added, &list.Items[i])
	}
	r.watch, err = support.Follow(ctx, list.GetResourceVersion(), dynWatcher{gvr: gvr, namespace: namespace},
		gvr.Resource+" watch", func(ev watch.Event) error {
			if ev.Type == watch.Error {
				return fmt.Errorf("%s watch error: %v", gvr.Resource, ev.Object)
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				r.observe(ev.Type, u)
			}
			return nil
		})
	Expect(err).NotTo(HaveOccurred())
	return r
}

func (r *phaseRecorder) observe(t watch.EventType, u *unstructured.Unstructured) {
	value, _, _ := unstructured.NestedString(u.Object, r.field...)
	reason, _, _ := unstructured.NestedString(u.Object, "status", "reason")
	message, _, _ := unstructured.NestedString(u.Object, "status", "message")
	if t == watch.Deleted {
		value, reason, message = "(deleted)", "", ""
	}
	if value == "" {
		value = "(none)"
	}
	key := value + "/" + reason
	r.mu.Lock()
	defer r.mu.Unlock()
	if last, seen := r.last[u.GetName()]; seen && last == key {
		return
	}
	r.last[u.GetName()] = key
	r.transitions = append(r.transitions, transition{At: time.Now(), Name: u.GetName(), Value: value, Reason: reason, Message: message})
}

// stop stops the watch; it returns an error if the watch broke, since it may have missed changes.
func (r *phaseRecorder) stop() error {
	return r.watch.Stop()
}

// all returns the transitions seen so far.
func (r *phaseRecorder) all() []transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]transition(nil), r.transitions...)
}

// firstAt returns when the object first showed the value, zero if never.
func (r *phaseRecorder) firstAt(name, value string) time.Time {
	for _, t := range r.all() {
		if t.Name == name && t.Value == value {
			return t.At
		}
	}
	return time.Time{}
}

// firstValue returns the first value recorded for the object, "" if none.
func (r *phaseRecorder) firstValue(name string) string {
	for _, t := range r.all() {
		if t.Name == name {
			return t.Value
		}
	}
	return ""
}

// describe lists the transitions, timed from t0.
func (r *phaseRecorder) describe(t0 time.Time) string {
	var b strings.Builder
	for _, t := range r.all() {
		fmt.Fprintf(&b, "  +%-7s %s %s: %s", t.At.Sub(t0).Round(time.Millisecond), r.gvr.Resource, t.Name, t.Value)
		if t.Reason != "" {
			fmt.Fprintf(&b, " (%s)", t.Reason)
		}
		if t.Message != "" {
			fmt.Fprintf(&b, " %q", t.Message)
		}
		b.WriteString("\n")
	}
	return b.String()
}
