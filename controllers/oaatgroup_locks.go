package controllers

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// Field indexes of the locks: OaatGroups by the OaatLocks and ClusterOaatLocks they name, OaatLocks
// by the groups holding a slot of them, ClusterOaatLocks by the namespace/name of those groups.
const (
	lockIndex              = "spec.locks"
	clusterLockIndex       = "spec.clusterLocks"
	lockHolderIndex        = "status.holders.group"
	clusterLockHolderIndex = "status.holders.namespacedGroup"
)

// gatherLocks reads, from the cache, the OaatLocks and ClusterOaatLocks the group names or holds a
// slot of, the other groups that wait for or run under one of the locks it names, and, when it names a
// ClusterOaatLock, its namespace's labels. A group that names no lock and holds none costs two
// indexed cache reads.
func (r *OaatGroupReconciler) gatherLocks(ctx context.Context, group *v1alpha1.OaatGroup) (locks.Input, error) {
	in := locks.Input{Locks: map[string]v1alpha1.Lock{}, Installation: r.Installation, AdoptionWindow: r.AdoptionWindow}
	held := &v1alpha1.OaatLockList{}
	if err := r.List(ctx, held, client.InNamespace(group.Namespace), client.MatchingFields{lockHolderIndex: group.Name}); err != nil {
		return in, fmt.Errorf("listing the OaatLocks the group holds: %w", err)
	}
	for i := range held.Items {
		in.Locks[held.Items[i].LockKey()] = &held.Items[i]
	}
	heldCluster := &v1alpha1.ClusterOaatLockList{}
	if err := r.List(ctx, heldCluster, client.MatchingFields{clusterLockHolderIndex: namespacedName(group.Namespace, group.Name)}); err != nil {
		return in, fmt.Errorf("listing the ClusterOaatLocks the group holds: %w", err)
	}
	for i := range heldCluster.Items {
		in.Locks[heldCluster.Items[i].LockKey()] = &heldCluster.Items[i]
	}
	seen := map[client.ObjectKey]bool{}
	named := func(key string, lock v1alpha1.Lock, index, name string, opts ...client.ListOption) error {
		if in.Locks[key] == nil {
			err := r.Get(ctx, client.ObjectKey{Namespace: lock.GetNamespace(), Name: name}, lock)
			switch {
			case err == nil:
				in.Locks[key] = lock
			case !apierrors.IsNotFound(err):
				return fmt.Errorf("reading %s: %w", v1alpha1.DescribeLocks([]string{key}), err)
			}
		}
		groups := &v1alpha1.OaatGroupList{}
		if err := r.List(ctx, groups, append(opts, client.MatchingFields{index: name})...); err != nil {
			return fmt.Errorf("listing the groups naming %s: %w", v1alpha1.DescribeLocks([]string{key}), err)
		}
		for i := range groups.Items {
			g := &groups.Items[i]
			id := client.ObjectKeyFromObject(g)
			if id == client.ObjectKeyFromObject(group) || seen[id] {
				continue
			}
			seen[id] = true
			ended, err := r.deletingRunEnded(ctx, g)
			if err != nil {
				return err
			}
			in.AddPeer(g, ended)
		}
		return nil
	}
	for _, name := range group.Spec.Locks {
		lock := &v1alpha1.OaatLock{ObjectMeta: metav1.ObjectMeta{Namespace: group.Namespace}}
		if err := named(name, lock, lockIndex, name, client.InNamespace(group.Namespace)); err != nil {
			return in, err
		}
	}
	for _, name := range group.Spec.ClusterLocks {
		if err := named(v1alpha1.ClusterLockKey(name), &v1alpha1.ClusterOaatLock{}, clusterLockIndex, name); err != nil {
			return in, err
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

// deletingRunEnded reports whether a group being deleted has a current run whose pod the cache
// shows ended or does not show (locks.Input.AddPeer): a deleting group starts no pod, so a pod the
// cache lacks is gone, not yet to be seen. False for a group that is not being deleted: its own
// passes record its runs.
func (r *OaatGroupReconciler) deletingRunEnded(ctx context.Context, g *v1alpha1.OaatGroup) (bool, error) {
	cr := g.Status.CurrentRun
	if cr == nil || g.DeletionTimestamp.IsZero() {
		return false, nil
	}
	ended, err := podEnded(ctx, r.Client, client.ObjectKey{Namespace: g.Namespace, Name: cr.PodName})
	if err != nil {
		return false, fmt.Errorf("the run of deleting group %s: %w", g.Name, err)
	}
	return ended, nil
}

// namespaceMetadata is the object the manager watches Namespaces as: their metadata only, for
// the labels that the namespaceSelector of a ClusterOaatLock selects.
func namespaceMetadata() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}}
}

// namespacedName is the value of clusterLockHolderIndex for a group.
func namespacedName(namespace, name string) string { return namespace + "/" + name }

// acquireLocks writes the group's new run into the holders of each lock, in the plan's order
// (by name), each write conditional on the lock being unchanged since it was read, so that two
// groups never both take the last slot. It reports whether every lock was taken; when one was
// not, those already taken are given back and nothing else of the plan is applied.
func (r *OaatGroupReconciler) acquireLocks(ctx context.Context, group *v1alpha1.OaatGroup, updates []locks.Update, pod string) (bool, error) {
	for i, u := range updates {
		lock := u.Lock.DeepCopyObject().(v1alpha1.Lock)
		lock.SetLockHolders(u.Holders)
		err := r.Status().Update(ctx, lock)
		if err == nil {
			continue
		}
		if undoErr := r.giveBack(ctx, group, updates[:i], pod); undoErr != nil {
			log.FromContext(ctx).Error(undoErr, "Cannot give back the locks taken so far; the next pass releases them")
		}
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			log.FromContext(ctx).V(1).Info("A lock changed since it was read; trying again", "lock", lock.LockKey())
			r.races.lostOn(client.ObjectKeyFromObject(lock), client.ObjectKeyFromObject(group))
			return false, nil
		}
		return false, fmt.Errorf("taking a slot of %s: %w", v1alpha1.DescribeLocks([]string{lock.LockKey()}), err)
	}
	return true, nil
}

// assertHolders writes the holders of the locks that lack the group's live run, each write
// conditional on the lock being unchanged since it was read. It reports whether all were written:
// a lock that changed meanwhile is left to the pass its change triggers.
func (r *OaatGroupReconciler) assertHolders(ctx context.Context, updates []locks.Update) (bool, error) {
	for _, u := range updates {
		lock := u.Lock.DeepCopyObject().(v1alpha1.Lock)
		err := writeHolders(ctx, r.Client, lock, u.Holders)
		switch {
		case err == nil:
			log.FromContext(ctx).Info("The lock lacked the group's live run: listed it", "lock", lock.LockKey())
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			return false, nil
		default:
			return false, fmt.Errorf("listing the live run in %s: %w", v1alpha1.DescribeLocks([]string{lock.LockKey()}), err)
		}
	}
	return true, nil
}

// writeLockBreakers writes the new states of the breakers the group's locks carry
// (planner.LockBreakerUpdate), after the group's status that they follow, before its slots are
// given back: a group naming the lock sees the probe's outcome before the slot it frees. A lock
// is read again from the API server, as the pass may have taken a slot of it; its breaker is
// written only if unchanged since the decision read it, else the pass ends and the next decides
// again. Each event follows its write.
func (r *OaatGroupReconciler) writeLockBreakers(ctx context.Context, a *applying) (*ctrl.Result, error) {
	for _, u := range a.plan.LockBreakers {
		key := client.ObjectKeyFromObject(u.Lock)
		var changed bool
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			lock := u.Lock.DeepCopyObject().(v1alpha1.Lock)
			if err := r.APIReader.Get(ctx, key, lock); err != nil {
				return err
			}
			if changed = !equality.Semantic.DeepEqual(lock.LockBreaker(), u.Lock.LockBreaker()); changed {
				return nil
			}
			lock.SetLockBreaker(u.Breaker)
			return r.Status().Update(ctx, lock)
		})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("writing the circuit breaker of %s: %w", v1alpha1.DescribeLocks([]string{u.Lock.LockKey()}), err)
		case changed:
			return requeueAfter(conflictRetry), nil
		}
		if e := u.Event; e != nil {
			r.Recorder.Eventf(u.Lock, nil, e.Type, string(e.Reason), "Reconcile", "%s", message.Event(e.Message))
			log.FromContext(ctx).Info(e.Message, "reason", e.Reason, "lock", u.Lock.LockKey())
		}
	}
	return nil, nil
}

// giveBack removes the group's holder for pod from each lock, read again from the API server.
func (r *OaatGroupReconciler) giveBack(ctx context.Context, group *v1alpha1.OaatGroup, updates []locks.Update, pod string) error {
	for _, u := range updates {
		if err := r.dropHolder(ctx, u.Lock, func(h v1alpha1.LockHolder) bool {
			return locks.HolderOf(h, u.Lock, group) && h.Pod == pod
		}); err != nil {
			return err
		}
	}
	return nil
}

// releaseLocks gives back the group's slots that the plan releases. The decision was made from
// the cache: unless the group's status was just written (then the decision saw the group as it
// is), the group is read from the API server first and nothing is released when it has changed
// since, as a lagging cache could show an older status that does not name the running pod yet.
func (r *OaatGroupReconciler) releaseLocks(ctx context.Context, group *v1alpha1.OaatGroup, updates []locks.Update, statusWritten bool) (bool, error) {
	if len(updates) == 0 {
		return true, nil
	}
	if !statusWritten {
		fresh := &v1alpha1.OaatGroup{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(group), fresh); err != nil {
			return false, fmt.Errorf("reading the group again before releasing its locks: %w", err)
		}
		if fresh.ResourceVersion != group.ResourceVersion {
			return false, nil
		}
	}
	for _, u := range updates {
		if err := r.dropHolder(ctx, u.Lock, func(h v1alpha1.LockHolder) bool {
			return locks.HolderOf(h, u.Lock, group) && locks.StaleHolder(h, group)
		}); err != nil {
			return false, err
		}
		log.FromContext(ctx).V(1).Info("Released a lock", "lock", u.Lock.LockKey())
	}
	return true, nil
}

// dropHolder removes the holders that match from the lock (of either kind), reading it again
// from the API server on a conflict; a lock that is gone has no holder to remove.
func (r *OaatGroupReconciler) dropHolder(ctx context.Context, as v1alpha1.Lock, match func(v1alpha1.LockHolder) bool) error {
	key := client.ObjectKeyFromObject(as)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lock := as.DeepCopyObject().(v1alpha1.Lock)
		if err := r.APIReader.Get(ctx, key, lock); err != nil {
			return err
		}
		return writeHolders(ctx, r.Client, lock, slices.DeleteFunc(slices.Clone(lock.LockHolders()), match))
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing a slot of %s: %w", v1alpha1.DescribeLocks([]string{as.LockKey()}), err)
	}
	return nil
}

// writeHolders writes the lock's new holders, if they differ, conditional on the lock being
// unchanged since it was read.
func writeHolders(ctx context.Context, c client.Client, lock v1alpha1.Lock, holders []v1alpha1.LockHolder) error {
	if equality.Semantic.DeepEqual(lock.LockHolders(), holders) || len(lock.LockHolders()) == 0 && len(holders) == 0 {
		return nil
	}
	lock.SetLockHolders(holders)
	return c.Status().Update(ctx, lock)
}

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
// group naming it (each becomes Ready, or not Ready with LockNotFound); a change of it (holders,
// waiting count, capacity) only the groups that can act on it (groupsToWake): with a thousand
// groups waiting on one lock, a slot's hand-off costs a few reconciles, not a thousand. A change
// of the circuit breaker the lock carries concerns every group naming it, which follows it.
type lockHandler struct {
	prioritized
}

// Update implements handler.EventHandler.
func (h lockHandler) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	onChange := h.prioritized
	onChange.toGroups = h.r.groupsToWake
	if before, ok := e.ObjectOld.(v1alpha1.Lock); ok && locks.BreakerChanged(before, e.ObjectNew.(v1alpha1.Lock)) {
		// Every group naming the lock follows the breaker it carries.
		onChange.toGroups = h.r.groupsOfLock
	}
	onChange.enqueue(ctx, e.ObjectNew, seen{}, q)
}

// namingGroups are the groups that name a lock of either kind (listNaming). A list that fails is
// logged and gives none: the event handlers that call it have no error to return, and a group's
// own retry still comes.
func (r *OaatGroupReconciler) namingGroups(ctx context.Context, lock v1alpha1.Lock) []v1alpha1.OaatGroup {
	groups, err := listNaming(ctx, r.Client, lock)
	if err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the groups that name a lock", "lock", lock.LockKey())
	}
	return groups
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

// groupsOfLock maps a lock of either kind to every group that names it or holds a slot of it.
func (r *OaatGroupReconciler) groupsOfLock(ctx context.Context, obj client.Object) []reconcile.Request {
	lock := obj.(v1alpha1.Lock)
	groups := r.namingGroups(ctx, lock)
	requests := holderRequests(lock)
	for i := range groups {
		requests = addRequest(requests, client.ObjectKeyFromObject(&groups[i]))
	}
	return requests
}

// groupsToWake maps a changed lock to the groups that can act on the change (locks.ToWake), and
// to those that lost the race for a slot of it since its last change (lockRaces).
func (r *OaatGroupReconciler) groupsToWake(ctx context.Context, obj client.Object) []reconcile.Request {
	lock := obj.(v1alpha1.Lock)
	var requests []reconcile.Request
	for _, key := range locks.ToWake(lock, r.namingGroups(ctx, lock)) {
		requests = addRequest(requests, key)
	}
	for _, key := range r.races.take(client.ObjectKeyFromObject(lock)) {
		requests = addRequest(requests, key)
	}
	return requests
}

// holderRequests are the groups holding a slot of the lock.
func holderRequests(lock v1alpha1.Lock) []reconcile.Request {
	var requests []reconcile.Request
	for _, h := range lock.LockHolders() {
		requests = addRequest(requests, client.ObjectKey{Namespace: v1alpha1.HolderNamespace(h, lock), Name: h.Group})
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
