package controllers

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
)

// Field indexes of the locks: OaatGroups by the OaatLocks and ClusterOaatLocks they name, OaatLocks
// by the groups holding a slot of them, ClusterOaatLocks by the namespace/name of those groups.
const (
	lockIndex              = "spec.locks"
	clusterLockIndex       = "spec.clusterLocks"
	lockHolderIndex        = "status.holders.group"
	clusterLockHolderIndex = "status.holders.namespacedGroup"
)

// gatherLocks reads, from the cache, the OaatLocks and ClusterOaatLocks the group names, the other
// groups naming one of them that wait for locks, and, when it names a ClusterOaatLock, its
// namespace's labels. A group that names no lock costs no read.
func (r *OaatGroupReconciler) gatherLocks(ctx context.Context, group *v1alpha1.OaatGroup) (locks.Input, error) {
	in := locks.Input{Locks: map[string]v1alpha1.Lock{}}
	seen := map[client.ObjectKey]bool{client.ObjectKeyFromObject(group): true}
	for _, key := range group.Spec.LockKeys() {
		lock, err := r.lockOf(ctx, group.Namespace, key)
		if err != nil {
			return in, fmt.Errorf("reading %s: %w", v1alpha1.DescribeLocks([]string{key}), err)
		}
		if lock != nil {
			in.Locks[key] = lock
		}
		naming, err := listNaming(ctx, r.Client, emptyLock(group.Namespace, key))
		if err != nil {
			return in, fmt.Errorf("listing the groups naming %s: %w", v1alpha1.DescribeLocks([]string{key}), err)
		}
		for i := range naming {
			if id := client.ObjectKeyFromObject(&naming[i]); !seen[id] {
				seen[id] = true
				in.AddWaiter(&naming[i])
			}
		}
	}
	if len(group.Spec.ClusterLocks) > 0 {
		// A namespace the cache does not show yet is read from the API server: taken for a
		// namespace without labels, it would match a NotIn or DoesNotExist selector that its
		// labels may not. One that cannot be read leaves the labels unread, which no lock permits.
		key := client.ObjectKey{Name: group.Namespace}
		ns := namespaceMetadata()
		err := r.Get(ctx, key, ns)
		if apierrors.IsNotFound(err) {
			err = r.APIReader.Get(ctx, key, ns)
		}
		switch {
		case err == nil:
			in.NamespaceLabels, in.NamespaceRead = ns.GetLabels(), true
		case !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err):
			return in, fmt.Errorf("reading the labels of namespace %s: %w", group.Namespace, err)
		}
	}
	return in, nil
}

// namespaceMetadata is the object the manager watches Namespaces as: their metadata only, for
// the labels that the namespaceSelector of a ClusterOaatLock selects.
func namespaceMetadata() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}}
}

// namespacedName is the value of clusterLockHolderIndex for a group.
func namespacedName(namespace, name string) string { return namespace + "/" + name }

// setupLockIndexes registers the field indexes of the locks: OaatGroups by the locks they name,
// locks by the groups holding a slot.
func setupLockIndexes(ctx context.Context, mgr ctrl.Manager) error {
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &v1alpha1.OaatGroup{}, lockIndex, namedLocks); err != nil {
		return fmt.Errorf("indexing OaatGroups by OaatLock: %w", err)
	}
	if err := indexer.IndexField(ctx, &v1alpha1.OaatGroup{}, clusterLockIndex, namedClusterLocks); err != nil {
		return fmt.Errorf("indexing OaatGroups by ClusterOaatLock: %w", err)
	}
	if err := indexer.IndexField(ctx, &v1alpha1.OaatLock{}, lockHolderIndex, holderGroups); err != nil {
		return fmt.Errorf("indexing OaatLocks by holder: %w", err)
	}
	if err := indexer.IndexField(ctx, &v1alpha1.ClusterOaatLock{}, clusterLockHolderIndex, holderGroups); err != nil {
		return fmt.Errorf("indexing ClusterOaatLocks by holder: %w", err)
	}
	return nil
}

// namedLocks are the OaatLocks a group names.
func namedLocks(obj client.Object) []string {
	return obj.(*v1alpha1.OaatGroup).Spec.Locks
}

// namedClusterLocks are the ClusterOaatLocks a group names.
func namedClusterLocks(obj client.Object) []string {
	return obj.(*v1alpha1.OaatGroup).Spec.ClusterLocks
}

// holderGroups are the groups holding a slot of a lock: their names for an OaatLock,
// namespace/name for a ClusterOaatLock.
func holderGroups(obj client.Object) []string {
	lock := obj.(v1alpha1.Lock)
	var groups []string
	for _, h := range lock.LockHolders() {
		if lock.GetNamespace() == "" {
			groups = append(groups, namespacedName(h.Namespace, h.Group))
			continue
		}
		groups = append(groups, h.Group)
	}
	return groups
}

// lockHandler queues the groups a lock's event concerns. Its creation and deletion concern every
// group naming it (each becomes Ready, or not Ready with LockNotFound); a change of its holders
// only the groups whose holder it added or removed (a grant to start with, a yield seen through)
// and those it promoted (promotedNow):
// with a thousand groups waiting on one lock, a slot's hand-off costs a few reconciles, not a
// thousand. A change of the circuit breaker the lock carries concerns every group naming it, which
// follows it.
type lockHandler struct {
	prioritized
}

// Update implements handler.EventHandler.
func (h lockHandler) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	before, ok := e.ObjectOld.(v1alpha1.Lock)
	if !ok {
		return
	}
	onChange := h.prioritized
	onChange.toGroups = func(_ context.Context, obj client.Object) []reconcile.Request {
		after := obj.(v1alpha1.Lock)
		return append(changedHolders(before, after), promotedNow(before, after)...)
	}
	if locks.BreakerChanged(before, e.ObjectNew.(v1alpha1.Lock)) {
		// Every group naming the lock follows the breaker it carries.
		onChange.toGroups = h.r.groupsOfLock
	}
	onChange.enqueue(ctx, e.ObjectNew, seen{}, q)
}

// changedHolders are the groups of the holders that one of two versions of a lock lists and the
// other does not.
func changedHolders(before, after v1alpha1.Lock) []reconcile.Request {
	var requests []reconcile.Request
	for _, pair := range [][2]v1alpha1.Lock{{before, after}, {after, before}} {
		for _, h := range pair[0].LockHolders() {
			if !slices.Contains(pair[1].LockHolders(), h) {
				requests = addRequest(requests, client.ObjectKey{Namespace: v1alpha1.HolderNamespace(h, pair[0]), Name: h.Group})
			}
		}
	}
	return requests
}

// promotedNow are the groups whose request the lock lists as passed over PassLimit times and did
// not before: each marks its request promoted (locks.Request), which its other locks follow.
func promotedNow(before, after v1alpha1.Lock) []reconcile.Request {
	var requests []reconcile.Request
	was := locks.QueueOf(before)
	for _, p := range after.Queue().PassedOver {
		key := client.ObjectKey{Namespace: cmp.Or(after.GetNamespace(), p.Namespace), Name: p.Group}
		if p.Count >= v1alpha1.PassLimit && was.PassedOver(key.Namespace, key.Name, v1alpha1.LockWait{Since: p.Since}) < v1alpha1.PassLimit {
			requests = addRequest(requests, key)
		}
	}
	return requests
}

// selfAndYielders maps a group to itself and to the groups that may have to yield a grant to it
// (yieldersFor).
func (r *OaatGroupReconciler) selfAndYielders(ctx context.Context, obj client.Object) []reconcile.Request {
	return append(self(ctx, obj), r.yieldersFor(ctx, obj)...)
}

// yieldersFor maps a group that waits for locks to the groups that may have to yield to it: those
// that hold the grant of a lock it waits for while they wait for another (locks.Request). Their
// lock does not change when this group begins to wait, so no lock event wakes them.
func (r *OaatGroupReconciler) yieldersFor(ctx context.Context, obj client.Object) []reconcile.Request {
	g := obj.(*v1alpha1.OaatGroup)
	if !locks.Waits(g) {
		return nil
	}
	var requests []reconcile.Request
	for _, key := range g.Status.LockWait.Locks {
		lock, err := r.lockOf(ctx, g.Namespace, key)
		if err != nil || lock == nil {
			continue
		}
		for _, h := range lock.LockHolders() {
			holder := &v1alpha1.OaatGroup{}
			id := client.ObjectKey{Namespace: v1alpha1.HolderNamespace(h, lock), Name: h.Group}
			if r.Get(ctx, id, holder) == nil && id != client.ObjectKeyFromObject(g) && locks.Waits(holder) {
				requests = addRequest(requests, id)
			}
		}
	}
	return requests
}

// lockOf reads a lock of either kind by its key among the locks of a group of the namespace, from
// the cache; nil when there is none.
func (r *OaatGroupReconciler) lockOf(ctx context.Context, namespace, key string) (v1alpha1.Lock, error) {
	lock := emptyLock(namespace, key)
	if err := r.Get(ctx, client.ObjectKeyFromObject(lock), lock); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return lock, nil
}

// emptyLock is the lock of that key among the locks of a group of the namespace, with only its
// namespace and name: an OaatLock of the namespace, or a ClusterOaatLock.
func emptyLock(namespace, key string) v1alpha1.Lock {
	if name, ok := strings.CutPrefix(key, v1alpha1.KindClusterOaatLock+"/"); ok {
		return &v1alpha1.ClusterOaatLock{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	return &v1alpha1.OaatLock{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: key}}
}

// listNaming lists, from the cache, the groups that name a lock of either kind: of its namespace
// for an OaatLock, of every namespace the manager watches for a ClusterOaatLock.
func listNaming(ctx context.Context, c client.Reader, lock v1alpha1.Lock) ([]v1alpha1.OaatGroup, error) {
	groups := &v1alpha1.OaatGroupList{}
	opts := []client.ListOption{client.InNamespace(lock.GetNamespace()), client.MatchingFields{lockIndex: lock.GetName()}}
	if lock.GetNamespace() == "" {
		opts = []client.ListOption{client.MatchingFields{clusterLockIndex: lock.GetName()}}
	}
	if err := c.List(ctx, groups, opts...); err != nil {
		return nil, err
	}
	return groups.Items, nil
}

// groupsOfLock maps a lock of either kind to every group that names it or holds a slot of it. A
// list that fails is logged and gives the holders only: an event handler has no error to return,
// and a group's own retry still comes.
func (r *OaatGroupReconciler) groupsOfLock(ctx context.Context, obj client.Object) []reconcile.Request {
	lock := obj.(v1alpha1.Lock)
	var requests []reconcile.Request
	for _, h := range lock.LockHolders() {
		requests = addRequest(requests, client.ObjectKey{Namespace: v1alpha1.HolderNamespace(h, lock), Name: h.Group})
	}
	groups, err := listNaming(ctx, r.Client, lock)
	if err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the groups that name a lock", "lock", lock.LockKey())
	}
	for i := range groups {
		requests = addRequest(requests, client.ObjectKeyFromObject(&groups[i]))
	}
	return requests
}

// addRequest adds the group's request unless it is there already.
func addRequest(requests []reconcile.Request, key client.ObjectKey) []reconcile.Request {
	req := reconcile.Request{NamespacedName: key}
	if slices.Contains(requests, req) {
		return requests
	}
	return append(requests, req)
}

// groupsOfNamespace maps a namespace whose labels changed to its groups that name a
// ClusterOaatLock: the lock's namespaceSelector may select it now, or no longer.
func (r *OaatGroupReconciler) groupsOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	if !r.watches(obj.GetName()) {
		return nil
	}
	groups := &v1alpha1.OaatGroupList{}
	if err := r.List(ctx, groups, client.InNamespace(obj.GetName())); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the groups of a namespace", "namespace", obj.GetName())
		return nil
	}
	var requests []reconcile.Request
	for i := range groups.Items {
		if len(groups.Items[i].Spec.ClusterLocks) > 0 {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&groups.Items[i])})
		}
	}
	return requests
}
