package controllers

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
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

// OaatLockReconciler is the one writer of the status of OaatLocks, or of ClusterOaatLocks: from
// the groups naming a lock (their requests, status.lockWait, and their current runs) it decides the
// lock's holders, its waiting count and the breaker it carries (locks.Decide), and writes them. A
// group only asks, and starts its run once every lock it names lists the request's pod.
type OaatLockReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	client.Client
	// APIReader reads from the API server directly, to confirm that a group is gone.
	APIReader client.Reader
	// Recorder emits the events of the review: the breaker's opening and closing, a run listed
	// over the lock's capacity.
	Recorder events.EventRecorder
	// Cluster makes the reconciler keep ClusterOaatLocks rather than OaatLocks.
	Cluster bool
	// Namespaces are the namespaces the manager watches, none for all. A holder of a
	// ClusterOaatLock of a group in another namespace is another installation's to decide: it
	// stays as it is.
	Namespaces []string
	// Installation names the installation when the manager watches only some namespaces
	// (locks.InstallationOf(Namespaces)), empty when it watches all. Such an installation cannot
	// count the waiters of a ClusterOaatLock in the other namespaces: it leaves its waitingGroups
	// to an installation that watches them all (two installations of some namespaces would
	// otherwise write their own counts over each other's, each write waking the other and every
	// group naming the lock, without end) and writes its own entry of status.installationClaims
	// instead, which the other installations count.
	Installation string
	// AdoptionWindow is how long a ClusterOaatLock grants no slot after its creation to the groups
	// of an installation of some namespaces (locks.AdoptedAt).
	AdoptionWindow time.Duration
	// Clock reads the time of the reviews.
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

// Reconcile reviews one lock and writes its new status.
func (r *OaatLockReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	lock := r.newLock()
	if err := r.Get(ctx, req.NamespacedName, lock); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("lock", lock.LockKey(), "namespace", lock.GetNamespace()))
	in, err := r.reviewInput(ctx, lock)
	if err != nil {
		return ctrl.Result{}, err
	}
	review := locks.Decide(in)
	var result ctrl.Result
	if review.Pending {
		result.RequeueAfter = orphanPodRetry
	}
	if !review.RetryAt.IsZero() {
		result.RequeueAfter = shorter(result.RequeueAfter, max(review.RetryAt.Sub(in.Now), time.Second))
	}
	before := lock.DeepCopyObject().(v1alpha1.Lock)
	lock.SetLockHolders(review.Holders)
	lock.SetLockBreaker(review.Breaker)
	*lock.Capacity() = review.Capacity.Status()
	lock.Queue().PassedOver = review.PassedOver
	lock.Adaptive().Adaptive = review.Adaptive
	var countOnly bool
	if cl, ok := lock.(*v1alpha1.ClusterOaatLock); ok && r.Installation != "" {
		entries, due, limited := locks.WaitingDue(cl, r.Installation, review.Waiting, in.Now)
		if due || limited {
			cl.Status.InstallationsWaiting = entries
		}
		countOnly = limited
		if review.Waiting != nil {
			result.RequeueAfter = shorter(result.RequeueAfter, locks.WaitingRenewal/2)
		}
	} else {
		countOnly = before.LockWaitingGroups() > 0 && review.WaitingGroups > 0
		lock.SetLockWaitingGroups(review.WaitingGroups)
	}
	if equality.Semantic.DeepEqual(before, lock) {
		return result, nil
	}
	if countOnly && len(review.Granted)+len(review.Asserted)+len(review.Dropped) == 0 && !locks.BreakerChanged(before, lock) &&
		equality.Semantic.DeepEqual(before.Capacity(), lock.Capacity()) && equality.Semantic.DeepEqual(before.Queue(), lock.Queue()) &&
		equality.Semantic.DeepEqual(before.Adaptive(), lock.Adaptive()) {
		if wait := r.waitingWriteIn(req.NamespacedName); wait > 0 {
			result.RequeueAfter = shorter(result.RequeueAfter, wait)
			return result, nil
		}
	}
	if err := r.Status().Update(ctx, lock); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, fmt.Errorf("writing the status of %s: %w", v1alpha1.DescribeLocks([]string{lock.LockKey()}), err)
	}
	r.noteWritten(req.NamespacedName)
	r.report(ctx, lock, review)
	return result, nil
}

// report logs the holders the review changed and emits its events, once the status is written.
func (r *OaatLockReconciler) report(ctx context.Context, lock v1alpha1.Lock, review locks.Review) {
	logger := log.FromContext(ctx)
	for _, change := range []struct {
		holders []v1alpha1.LockHolder
		what    string
	}{
		{review.Granted, "Granted a slot to a group's request"},
		{review.Asserted, "Listed a live run the lock lacked"},
		{review.Dropped, "Released the slot of a run that ended, a request withdrawn, or a group gone"},
	} {
		for _, h := range change.holders {
			logger.Info(change.what, "oaatGroup", klog.KRef(v1alpha1.HolderNamespace(h, lock), h.Group), "pod", h.Pod)
		}
	}
	for _, e := range review.Events {
		var about runtime.Object = lock
		if e.Group.Name != "" {
			about = &v1alpha1.OaatGroup{ObjectMeta: metav1.ObjectMeta{Namespace: e.Group.Namespace, Name: e.Group.Name, UID: types.UID(e.GroupUID)}}
		}
		r.Recorder.Eventf(about, nil, e.Type, string(e.Reason), "Reconcile", "%s", message.Event(e.Message))
		logger.Info(e.Message, "reason", e.Reason)
	}
}

// shorter is the shorter of a requeue delay (0 for none) and another.
func shorter(requeue, d time.Duration) time.Duration {
	if requeue == 0 || d < requeue {
		return d
	}
	return requeue
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

// reviewInput reads what the review of the lock needs: the groups naming it, from the cache, and
// for each holder whose group does not name it, that group as the cache or else the API server
// shows it (gone when neither has a group of its UID), and whether the holder's pod is live when
// its group is gone or being deleted and the pod is not its live current run.
func (r *OaatLockReconciler) reviewInput(ctx context.Context, lock v1alpha1.Lock) (locks.ReviewInput, error) {
	in := locks.ReviewInput{Lock: lock, Now: r.Clock.Now(), Installation: r.Installation, AdoptionWindow: r.AdoptionWindow, Namespaces: r.Namespaces}
	naming, err := listNaming(ctx, r.Client, lock)
	if err != nil {
		return in, fmt.Errorf("listing the groups naming the lock: %w", err)
	}
	for i := range naming {
		m, err := r.member(ctx, &naming[i], true)
		if err != nil {
			return in, err
		}
		m.Option = naming[i].Spec.LockOptionFor(lock.LockKey())
		in.Members = append(in.Members, m)
	}
	for _, h := range lock.LockHolders() {
		facts, err := r.holderFacts(ctx, &in, h)
		if err != nil {
			return in, err
		}
		in.Holders = append(in.Holders, facts)
	}
	return in, nil
}

// member is the group as the review reads it: its request and current run, and whether that run's
// pod has ended (as the cache shows it; a pod the cache lacks has ended only for a group being
// deleted, which creates none).
func (r *OaatLockReconciler) member(ctx context.Context, g *v1alpha1.OaatGroup, names bool) (locks.Member, error) {
	m := locks.Member{Namespace: g.Namespace, Name: g.Name, UID: string(g.UID), Names: names, Deleting: !g.DeletionTimestamp.IsZero(),
		Request: g.Status.LockWait, Run: g.Status.CurrentRun, Breaker: g.Status.CircuitBreaker,
		Items: g.Status.Items, Counting: groupspec.CountingOf(&g.Spec)}
	if m.Run == nil {
		return m, nil
	}
	pod := &corev1.Pod{}
	err := r.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: m.Run.PodName}, pod)
	switch {
	case apierrors.IsNotFound(err):
		m.RunEnded = m.Deleting
	case err != nil:
		return m, fmt.Errorf("reading the pod of the current run of group %s: %w", g.Name, err)
	default:
		m.RunEnded = podbuild.Terminal(pod)
	}
	return m, nil
}

// holderFacts reads what the review needs of a holder beyond the members: its group when it does
// not name the lock (added to the members), and whether its pod is live when no live group of its
// UID names the pod as its current run. A holder of a namespace the manager does not watch is
// foreign.
func (r *OaatLockReconciler) holderFacts(ctx context.Context, in *locks.ReviewInput, h v1alpha1.LockHolder) (locks.HolderFacts, error) {
	namespace := v1alpha1.HolderNamespace(h, in.Lock)
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, namespace) {
		return locks.HolderFacts{Foreign: true}, nil
	}
	m := locks.FindMember(in.Members, namespace, h.Group, h.GroupUID)
	if m == nil {
		group, err := r.holderGroup(ctx, namespace, h)
		switch {
		case apierrors.IsForbidden(err):
			return locks.HolderFacts{Foreign: true}, nil
		case err != nil:
			return locks.HolderFacts{}, err
		case group != nil:
			found, err := r.member(ctx, group, false)
			if err != nil {
				return locks.HolderFacts{}, err
			}
			in.Members = append(in.Members, found)
			m = &in.Members[len(in.Members)-1]
		}
	}
	if m != nil && !m.Deleting {
		return locks.HolderFacts{}, nil
	}
	ended, err := podEnded(ctx, r.APIReader, client.ObjectKey{Namespace: namespace, Name: h.Pod})
	if err != nil {
		return locks.HolderFacts{}, fmt.Errorf("the slot of a group gone or being deleted: %w", err)
	}
	return locks.HolderFacts{PodLive: !ended}, nil
}

// holderGroup is the holder's group, of its UID, as the cache shows it, or else as the API server
// does; nil when there is none (the group is gone, or is another of the same name).
func (r *OaatLockReconciler) holderGroup(ctx context.Context, namespace string, h v1alpha1.LockHolder) (*v1alpha1.OaatGroup, error) {
	key := client.ObjectKey{Namespace: namespace, Name: h.Group}
	group := &v1alpha1.OaatGroup{}
	if err := r.Get(ctx, key, group); err == nil && string(group.UID) == h.GroupUID {
		return group, nil
	}
	err := r.APIReader.Get(ctx, key, group)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("reading OaatGroup %s, which holds a slot: %w", h.Group, err)
	}
	if string(group.UID) != h.GroupUID {
		return nil, nil
	}
	return group, nil
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
