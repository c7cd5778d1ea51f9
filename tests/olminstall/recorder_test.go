//go:build olminstall

package olminstall

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
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

// rbacChange is an event of a ClusterRole or ClusterRoleBinding that OLM labelled as made for a
// CSV, as a watch showed it.
type rbacChange struct {
	At       time.Time
	Type     watch.EventType
	Kind     string
	Name     string
	UID      string
	Version  string
	Created  time.Time
	Managers string // who wrote it, from managedFields: "manager operation time", comma-separated
}

// rbacRecorder follows, through watches, the ClusterRoles and ClusterRoleBindings labelled
// olm.owner=<CSV>, olm.owner.namespace=<install namespace>: the cluster-scoped RBAC OLM makes for
// the CSV's clusterPermissions, which OLM deletes only once, in the CSV's finalizer (a
// cluster-scoped object cannot have a namespaced owner, so Kubernetes' garbage collector never
// deletes them). When one outlives the uninstall, its history tells whether it was never deleted
// or deleted and made again, and by whom.
type rbacRecorder struct {
	selector string
	watches  []*support.Watch

	mu      sync.Mutex
	changes []rbacChange
}

type rbacWatcher struct {
	selector string
	kind     string
}

func (w rbacWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	options.LabelSelector = w.selector
	if w.kind == "ClusterRole" {
		return clientset.RbacV1().ClusterRoles().Watch(ctx, options)
	}
	return clientset.RbacV1().ClusterRoleBindings().Watch(ctx, options)
}

// startRBACRecorder starts recording the ClusterRoles and ClusterRoleBindings OLM makes for the
// CSV csvName installed in namespace.
func startRBACRecorder(ctx context.Context, csvName, namespace string) *rbacRecorder {
	GinkgoHelper()
	r := &rbacRecorder{selector: labels.SelectorFromSet(csvOwnerLabels(csvName, namespace)).String()}
	opts := metav1.ListOptions{LabelSelector: r.selector}
	crs, err := clientset.RbacV1().ClusterRoles().List(ctx, opts)
	Expect(err).NotTo(HaveOccurred())
	for i := range crs.Items {
		r.observe(watch.Added, "ClusterRole", &crs.Items[i])
	}
	crbs, err := clientset.RbacV1().ClusterRoleBindings().List(ctx, opts)
	Expect(err).NotTo(HaveOccurred())
	for i := range crbs.Items {
		r.observe(watch.Added, "ClusterRoleBinding", &crbs.Items[i])
	}
	for kind, rv := range map[string]string{"ClusterRole": crs.ResourceVersion, "ClusterRoleBinding": crbs.ResourceVersion} {
		w, err := support.Follow(ctx, rv, rbacWatcher{selector: r.selector, kind: kind}, kind+" watch ("+r.selector+")",
			func(ev watch.Event) error {
				if ev.Type == watch.Error {
					return fmt.Errorf("%s watch error: %v", kind, ev.Object)
				}
				if o, ok := ev.Object.(metav1.Object); ok {
					r.observe(ev.Type, kind, o)
				}
				return nil
			})
		Expect(err).NotTo(HaveOccurred())
		r.watches = append(r.watches, w)
	}
	return r
}

// csvOwnerLabels are the labels by which OLM marks what it made for a CSV, and by which the CSV's
// finalizer finds the cluster-scoped part of it to delete.
func csvOwnerLabels(csvName, namespace string) map[string]string {
	return map[string]string{"olm.owner": csvName, "olm.owner.namespace": namespace}
}

func (r *rbacRecorder) observe(t watch.EventType, kind string, o metav1.Object) {
	if t == watch.Bookmark {
		return
	}
	var managers []string
	for _, f := range o.GetManagedFields() {
		at := ""
		if f.Time != nil {
			at = " " + f.Time.UTC().Format(time.RFC3339)
		}
		managers = append(managers, fmt.Sprintf("%s %s%s", f.Manager, f.Operation, at))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, rbacChange{
		At: time.Now(), Type: t, Kind: kind, Name: o.GetName(), UID: string(o.GetUID()),
		Version: o.GetResourceVersion(), Created: o.GetCreationTimestamp().Time, Managers: strings.Join(managers, ", "),
	})
}

// stop stops the watches; it returns an error if one broke, since it may have missed changes.
func (r *rbacRecorder) stop() error {
	var errs []string
	for _, w := range r.watches {
		if err := w.Stop(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// history describes what the watches saw of one object, timed from t0.
func (r *rbacRecorder) history(kind, name string, t0 time.Time) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, c := range r.changes {
		if c.Kind != kind || c.Name != name {
			continue
		}
		fmt.Fprintf(&b, "\n      +%-7s %s uid %s resourceVersion %s, created %s, written by %s",
			c.At.Sub(t0).Round(time.Millisecond), c.Type, c.UID, c.Version, c.Created.UTC().Format(time.RFC3339), c.Managers)
	}
	if b.Len() == 0 {
		return "\n      (no event seen)"
	}
	return b.String()
}

// recreated tells whether the watches saw the object deleted and then added again.
func (r *rbacRecorder) recreated(kind, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	deleted := false
	for _, c := range r.changes {
		if c.Kind != kind || c.Name != name {
			continue
		}
		switch {
		case c.Type == watch.Deleted:
			deleted = true
		case c.Type == watch.Added && deleted:
			return true
		}
	}
	return false
}
