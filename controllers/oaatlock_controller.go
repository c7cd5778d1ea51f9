package controllers

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
)

// orphanPodRetry is how soon a lock is looked at again while the pod of a deleted group's slot
// still runs (its garbage collection is under way).
const orphanPodRetry = 5 * time.Second

// waitingRefresh is how often at most a lock's status is written for a change of its count of
// waiting groups alone. That count changes with every group that starts or stops waiting: written
// at each change, it cost more writes than the slots themselves (docs/performance.md). The
// count is for people and dashboards; a few seconds late is fine. Holder changes are written at
// once, and so is a count that becomes or stops being zero (someone begins to wait, nobody waits
// any more): only the churn between nonzero counts waits.
const waitingRefresh = 10 * time.Second

// OaatLockReconciler keeps the status of OaatLocks, or of ClusterOaatLocks: it gives back the
// slots of groups that no longer exist or are being deleted, once their pod has ended, and counts
// the groups waiting for the lock. Slots of
// existing groups are the groups' own business: each group's reconcile, one at a time per group,
// takes and gives back its slots, so that a slot taken just before the group records its run is
// never mistaken for a stale one.
type OaatLockReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	client.Client
	// APIReader reads from the API server directly, to confirm that a group is gone.
	APIReader client.Reader
	// Cluster makes the reconciler keep ClusterOaatLocks rather than OaatLocks.
	Cluster bool
	// Installation names the installation when the manager watches only some namespaces
	// (WATCH_NAMESPACE; locks.InstallationOf), empty when it watches all. Such an installation
	// cannot count the waiters of a ClusterOaatLock in the other namespaces: it leaves its
	// waitingGroups to an installation that watches them all (two installations of some
	// namespaces would otherwise write their own counts over each other's, each write waking the
	// other and every group naming the lock, without end) and writes its own entry of
	// status.installationClaims instead, which the other installations count.
	Installation string
	// Clock reads the time for waitingRefresh.
	Clock clock.PassiveClock

	// written is when this process last wrote each lock's status: a rate limit of the waiting
	// count's writes, not state (after a restart the first change is written at once).
	mu      sync.Mutex
	written map[client.ObjectKey]time.Time
}

// +kubebuilder:rbac:groups=oaat.io,resources=oaatlocks,verbs=get;list;watch
// +kubebuilder:rbac:groups=oaat.io,resources=oaatlocks/status,verbs=get;update;patch
// The rights on ClusterOaatLocks and Namespaces are cluster-scoped: they are not markers (which
// make manager-role, a Role in the bundle's namespaced permissions) but the ClusterRole of
// config/rbac/cluster_lock_role.yaml, which the bundle lists in its clusterPermissions.

// newLock is an empty lock of the kind the reconciler keeps.
func (r *OaatLockReconciler) newLock() v1alpha1.Lock {
	if r.Cluster {
		return &v1alpha1.ClusterOaatLock{}
	}
	return &v1alpha1.OaatLock{}
}

// Reconcile brings one lock's status up to date.
func (r *OaatLockReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	lock := r.newLock()
	if err := r.Get(ctx, req.NamespacedName, lock); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("lock", lock.LockKey(), "namespace", lock.GetNamespace()))
	holders, pending, err := r.liveHolders(ctx, lock)
	if err != nil {
		return ctrl.Result{}, err
	}
	naming, err := listNaming(ctx, r.Client, lock)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the groups naming the lock: %w", err)
	}
	var result ctrl.Result
	if pending {
		result.RequeueAfter = orphanPodRetry
	}
	before := lock.DeepCopyObject().(v1alpha1.Lock)
	lock.SetLockHolders(holders)
	if !lock.CarriesBreaker() {
		lock.SetLockBreaker(nil)
	}
	var countOnly bool
	if cl, ok := lock.(*v1alpha1.ClusterOaatLock); ok && r.Installation != "" {
		now := r.Clock.Now()
		mine := locks.ClaimOf(r.Installation, naming, now)
		claims, due, limited := locks.ClaimDue(cl, r.Installation, mine, now)
		if due || limited {
			cl.Status.InstallationClaims = claims
		}
		countOnly = limited
		if mine != nil {
			result.RequeueAfter = shorter(result.RequeueAfter, locks.ClaimRenewal/2)
		}
	} else {
		waiting := locks.WaitingCount(naming)
		countOnly = before.LockWaitingGroups() > 0 && waiting > 0
		lock.SetLockWaitingGroups(waiting)
	}
	if equality.Semantic.DeepEqual(before, lock) {
		return result, nil
	}
	if countOnly && sameHolders(before.LockHolders(), holders) {
		if wait := r.waitingWriteIn(req.NamespacedName); wait > 0 {
			result.RequeueAfter = shorter(result.RequeueAfter, wait)
			return result, nil
		}
	}
	for _, h := range before.LockHolders() {
		if !slices.Contains(holders, h) {
			log.FromContext(ctx).Info("Released the ended slot of a group that is gone or being deleted",
				"oaatGroup", klog.KRef(v1alpha1.HolderNamespace(h, lock), h.Group), "pod", h.Pod)
		}
	}
	if err := r.Status().Update(ctx, lock); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, fmt.Errorf("writing the status of %s: %w", v1alpha1.DescribeLocks([]string{lock.LockKey()}), err)
	}
	r.noteWritten(req.NamespacedName)
	return result, nil
}

// shorter is the shorter of a requeue delay (0 for none) and another.
func shorter(requeue, d time.Duration) time.Duration {
	if requeue == 0 || d < requeue {
		return d
	}
	return requeue
}

// sameHolders reports whether two lists of holders are the same (nil and empty alike).
func sameHolders(a, b []v1alpha1.LockHolder) bool {
	return len(a) == len(b) && (len(a) == 0 || equality.Semantic.DeepEqual(a, b))
}

// waitingWriteIn is how long a write of the lock's waiting count alone must wait: 0 when this
// process has not written the lock's status within waitingRefresh.
func (r *OaatLockReconciler) waitingWriteIn(key client.ObjectKey) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	last, ok := r.written[key]
	if !ok {
		return 0
	}
	return max(last.Add(waitingRefresh).Sub(r.Clock.Now()), 0)
}

// forget drops what the rate limit knows of a lock that is gone.
func (r *OaatLockReconciler) forget(key client.ObjectKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.written, key)
}

// noteWritten records that the lock's status was written now.
func (r *OaatLockReconciler) noteWritten(key client.ObjectKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written == nil {
		r.written = map[client.ObjectKey]time.Time{}
	}
	r.written[key] = r.Clock.Now()
}

// liveHolders returns the holders that stay: those of groups that exist and are not being
// deleted (with the holder's UID, as the API server says), and those of deleted or deleting groups
// whose pod is still live; pending says that such a pod exists. A group being deleted records no
// run (its pass only releases its pods and keeps its history), and another tool's finalizer may
// keep it for long: its slot is given back once its pod has ended, as if it were gone.
func (r *OaatLockReconciler) liveHolders(ctx context.Context, lock v1alpha1.Lock) (holders []v1alpha1.LockHolder, pending bool, err error) {
	for _, h := range lock.LockHolders() {
		namespace := v1alpha1.HolderNamespace(h, lock)
		leaving, err := r.groupLeaving(ctx, namespace, h)
		if err != nil {
			return nil, false, err
		}
		if !leaving {
			holders = append(holders, h)
			continue
		}
		ended, err := podEnded(ctx, r.APIReader, client.ObjectKey{Namespace: namespace, Name: h.Pod})
		if err != nil {
			return nil, false, fmt.Errorf("the slot of a group gone or being deleted: %w", err)
		}
		if !ended {
			holders = append(holders, h)
			pending = true
		}
	}
	return holders, pending, nil
}

// groupLeaving reports whether the holder's group no longer exists or is being deleted: the cache
// shows no group of that name and UID, or shows it being deleted, and the API server agrees. A
// holder of a ClusterOaatLock in a namespace this operator may not read (another installation's,
// in OwnNamespace mode) is that one's to release: it is never taken for leaving.
func (r *OaatLockReconciler) groupLeaving(ctx context.Context, namespace string, h v1alpha1.LockHolder) (bool, error) {
	key := client.ObjectKey{Namespace: namespace, Name: h.Group}
	group := &v1alpha1.OaatGroup{}
	if err := r.Get(ctx, key, group); err == nil && string(group.UID) == h.GroupUID && group.DeletionTimestamp.IsZero() {
		return false, nil
	}
	err := r.APIReader.Get(ctx, key, group)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case apierrors.IsForbidden(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading OaatGroup %s, which holds a slot: %w", h.Group, err)
	}
	return string(group.UID) != h.GroupUID || !group.DeletionTimestamp.IsZero(), nil
}

// SetupWithManager registers the reconciler: it runs on changes of a lock, and of a group, for
// the locks it names or holds a slot of.
func (r *OaatLockReconciler) SetupWithManager(mgr ctrl.Manager) error {
	name := "oaatlock"
	if r.Cluster {
		name = "clusteroaatlock"
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(r.newLock()).
		Watches(&v1alpha1.OaatGroup{}, handler.EnqueueRequestsFromMapFunc(r.locksOfGroup)).
		Named(name).
		Complete(r)
}

// locksOfGroup maps a group to the locks of the reconciler's kind that it names and those it
// holds a slot of.
func (r *OaatLockReconciler) locksOfGroup(ctx context.Context, obj client.Object) []reconcile.Request {
	group := obj.(*v1alpha1.OaatGroup)
	var requests []reconcile.Request
	namespace, names := group.Namespace, group.Spec.Locks
	var held client.ObjectList = &v1alpha1.OaatLockList{}
	opts := []client.ListOption{client.InNamespace(group.Namespace), client.MatchingFields{lockHolderIndex: group.Name}}
	if r.Cluster {
		namespace, names = "", group.Spec.ClusterLocks
		held = &v1alpha1.ClusterOaatLockList{}
		opts = []client.ListOption{client.MatchingFields{clusterLockHolderIndex: namespacedName(group.Namespace, group.Name)}}
	}
	add := func(name string) {
		req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: namespace, Name: name}}
		if !slices.Contains(requests, req) {
			requests = append(requests, req)
		}
	}
	for _, name := range names {
		add(name)
	}
	if err := r.List(ctx, held, opts...); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the locks a group holds", "oaatGroup", klog.KObj(group))
	}
	if err := meta.EachListItem(held, func(o runtime.Object) error {
		add(o.(client.Object).GetName())
		return nil
	}); err != nil {
		log.FromContext(ctx).Error(err, "Cannot read the locks a group holds", "oaatGroup", klog.KObj(group))
	}
	return requests
}
