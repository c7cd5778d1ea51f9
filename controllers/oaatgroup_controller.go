// Package controllers holds the operator's four reconcilers, each in its _controller.go file with
// its SetupWithManager: the OaatGroup reconciler, which gathers a snapshot, lets the planner
// decide and applies the plan (oaatgroup_controller.go, with gather.go, apply.go, priority.go for
// its queue priority, oaatgroup_locks.go for its reads and writes of its locks and
// oaatgroup_history.go for its history record); the on-demand run reconciler, of OaatRuns
// (ondemandrun_controller.go); the lock reconciler of OaatLocks and ClusterOaatLocks
// (oaatlock_controller.go); and the history record reconciler, of OaatGroupHistories
// (oaatgrouphistory_controller.go). setup.go holds the manager's cache options, the field indexes
// and Setup, which registers them all.
package controllers

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duepriority"
	"github.com/oaat-io/oaat-operator/internal/leader"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// OaatGroupReconciler runs the items of each OaatGroup one at a time.
type OaatGroupReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	client.Client
	// APIReader reads from the API server directly, to confirm what the cache may not have seen
	// yet.
	APIReader client.Reader
	// Recorder emits events about groups.
	Recorder recorder.EventRecorder
	// Clock is the time source of every decision.
	Clock clock.PassiveClock
	// Seed makes the random tie-breaks reproducible: a decision's random source is seeded from it,
	// the group's UID and its run count.
	Seed uint64
	// Runs observes each finished run once its outcome is persisted.
	Runs *metrics.RunMetrics
	// MaxConcurrentReconciles is how many groups are reconciled at once (at least one).
	MaxConcurrentReconciles int
	// Leader checks, right before each pod is created, that this process still holds the
	// leader-election Lease; nil without leader election.
	Leader *leader.Guard
	// LockMetrics observes how long groups waited for their locks; nil observes nothing.
	LockMetrics *metrics.LockMetrics
	// Namespaces are the namespaces the manager's cache holds (WATCH_NAMESPACE), none when it
	// holds all: the events of the cluster-scoped objects it watches (a ClusterOaatLock, a
	// Namespace) may concern groups of other namespaces, another installation's, which it leaves
	// alone.
	Namespaces []string
	// HistoryRetention is how long the OaatGroupHistory of a deleted group is kept
	// (history.DefaultRetention unless --history-retention says otherwise).
	HistoryRetention time.Duration
	// HistoryRefusalWait is how long a group being deleted waits for the API server to accept its
	// OaatGroupHistory once it refused it for good (history.DefaultRefusalWait unless
	// --history-refusal-wait says otherwise).
	HistoryRefusalWait time.Duration

	onDemandRuns onDemandRunWriter
	// refusals paces the start attempts of groups whose status the API server refuses.
	refusals statusRefusals
	// expected are this manager's writes that the cache has not shown yet.
	expected expectations
	// forecasts makes condition AtRisk off the reconcile path.
	forecasts *forecaster

	// Notify says where the groups' transitions go.
	Notify NotifyOptions
	// notifier sends the groups' transitions off the reconcile path.
	notifier *notifier
}

// watches reports whether the manager's cache holds the namespace's groups.
func (r *OaatGroupReconciler) watches(namespace string) bool {
	return len(r.Namespaces) == 0 || slices.Contains(r.Namespaces, namespace)
}

// +kubebuilder:rbac:groups=oaat.io,resources=oaatgroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=oaat.io,resources=oaatgroups/status,verbs=get;update;patch
// Item pods block their group's deletion until they are gone (blockOwnerDeletion), which
// clusters enforcing OwnerReferencesPermissionEnforcement allow only with update on finalizers.
// +kubebuilder:rbac:groups=oaat.io,resources=oaatgroups/finalizers,verbs=update
// +kubebuilder:rbac:groups=oaat.io,resources=oaattypes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;deletecollection
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one OaatGroup a step closer to its items running one at a time.
func (r *OaatGroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// The pass's one time, and what its writes still expect, before its first read of the cache
	// (expectations).
	now := r.Clock.Now()
	pending := r.expected.pending(req.NamespacedName, now)
	group := &v1alpha1.OaatGroup{}
	if err := r.Get(ctx, req.NamespacedName, group); err != nil {
		if apierrors.IsNotFound(err) {
			r.Runs.Forget(req.Namespace, req.Name)
			r.refusals.forget(req.NamespacedName)
			r.expected.forget(req.NamespacedName)
			r.forecasts.forget(req.NamespacedName)
			r.notifier.forget(req.NamespacedName)
			return ctrl.Result{}, r.releasePods(ctx, req.NamespacedName, "", pending)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("oaatGroup", klog.KObj(group)))
	if !group.DeletionTimestamp.IsZero() {
		// Its pods go with it through their owner reference, released from their finalizer.
		if err := r.releasePods(ctx, req.NamespacedName, group.UID, pending); err != nil {
			return ctrl.Result{}, err
		}
		return r.finalize(ctx, group)
	}
	r.Runs.RetainItems(group.Namespace, group.Name, hasItemStatus(group))

	in, awaited, err := r.gather(ctx, group, now, pending)
	if err != nil {
		return ctrl.Result{}, err
	}
	if awaited != "" {
		log.FromContext(ctx).V(1).Info("Waiting for the cache to show the pod just created", "pod", awaited)
		return ctrl.Result{RequeueAfter: cacheLagRetry, Priority: wakeUpPriority()}, nil
	}
	in.AtRisk = r.forecasts.atRisk(req.NamespacedName)
	in.Notify = r.notifyInput(req.NamespacedName)
	// The outbox as persisted: after a failover, what the last leader did not see acknowledged.
	r.notifier.consider(in.Group, in.Group.Status.Notifications, r.groupSink(in.Group))
	plan := planner.Decide(in)
	// Condition AtRisk: the same decision played forward, off the reconcile path.
	r.forecasts.consider(req.NamespacedName, in, plan)
	result, err := r.apply(ctx, in.Group, plan, in.Now, pending)
	if result.RequeueAfter > 0 {
		result.Priority = wakeUpPriority()
	}
	return result, err
}

// hasItemStatus reports whether the group's persisted status has an entry for an item.
func hasItemStatus(group *v1alpha1.OaatGroup) func(item string) bool {
	return func(item string) bool {
		return slices.ContainsFunc(group.Status.Items, func(it v1alpha1.ItemStatus) bool { return it.Name == item })
	}
}

// random is the random source of one decision, the same for the same group and run count.
func (r *OaatGroupReconciler) random(group *v1alpha1.OaatGroup) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", group.UID, group.Status.RunCount)
	return rand.New(rand.NewPCG(r.Seed, h.Sum64()))
}

// SetupWithManager registers the reconciler: it runs on changes of a group, of any pod carrying a
// group's label (owned or rogue), of an OaatType or a ConfigMap, for every group that names it,
// of a PersistentVolumeClaim's labels or deletion, for every group that selects it (before or
// after), and of an OaatRun, for the group it names.
func (r *OaatGroupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.onDemandRuns = onDemandRunWriter{client: r.Client, recorder: r.Recorder, runs: r.Runs}
	reprioritize := &reprioritizer{r: r, cache: mgr.GetCache(), queueHandover: newQueueHandover()}
	if err := mgr.Add(reprioritize); err != nil {
		return err
	}
	r.forecasts = newForecaster()
	if err := mgr.Add(r.forecasts); err != nil {
		return err
	}
	r.notifier = newNotifier(r.Clock, r.Notify)
	if err := mgr.Add(r.notifier); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		WatchesRawSource(reprioritize.source()).
		WatchesRawSource(r.forecasts.source()).
		WatchesRawSource(r.notifier.source()).
		// Every watch queues with a priority (prioritized, package duepriority), the group's own too:
		// For's handler would queue the informer's initial list in list order.
		Watches(&v1alpha1.OaatGroup{}, prioritized{r: r, toGroups: r.selfAndYielders, floor: duepriority.Idle}).
		Watches(&corev1.Pod{}, prioritized{r: r, toGroups: podToGroup, floor: duepriority.Idle}).
		Watches(&v1alpha1.OaatType{}, prioritized{r: r, toGroups: r.groupsNaming(oaatTypeIndex), floor: duepriority.Unknown}).
		Watches(&corev1.ConfigMap{}, prioritized{r: r, toGroups: r.groupsNaming(configMapIndex), floor: duepriority.Unknown}, builder.OnlyMetadata).
		Watches(claimMetadata(), claimHandler{prioritized{r: r, toGroups: r.groupsSelectingClaim, floor: duepriority.Unknown}},
			builder.OnlyMetadata, builder.WithPredicates(claimChanged)).
		Watches(&v1alpha1.OaatRun{}, prioritized{r: r, toGroups: onDemandRunToGroup, floor: duepriority.Unknown, dueOnCreate: true}).
		Watches(&v1alpha1.OaatLock{}, lockHandler{prioritized{r: r, toGroups: r.groupsOfLock, floor: duepriority.Unknown}}).
		Watches(&v1alpha1.ClusterOaatLock{}, lockHandler{prioritized{r: r, toGroups: r.groupsOfLock, floor: duepriority.Unknown}}).
		Watches(namespaceMetadata(), prioritized{r: r, toGroups: r.groupsOfNamespace, floor: duepriority.Unknown},
			builder.OnlyMetadata, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: max(r.MaxConcurrentReconciles, 1),
			// The priority queue is controller-runtime's default; said here because the order
			// of the work depends on it.
			UsePriorityQueue: ptr.To(true),
			// A replica that is not the leader keeps its caches synced, so that it acts as soon
			// as it takes the Lease (a failover does not wait for a cold start).
			EnableWarmup: ptr.To(true),
		}).
		Named("oaatgroup").
		Complete(r)
}

// self maps a group to itself.
func self(_ context.Context, group client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(group)}}
}

// podToGroup maps a pod to the group named by its label.
func podToGroup(_ context.Context, pod client.Object) []reconcile.Request {
	name, ok := pod.GetLabels()[v1alpha1.LabelGroup]
	if !ok || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: pod.GetNamespace(), Name: name}}}
}

// onDemandRunToGroup maps an OaatRun to the group it names.
func onDemandRunToGroup(_ context.Context, onDemandRun client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKey{
		Namespace: onDemandRun.GetNamespace(), Name: onDemandRun.(*v1alpha1.OaatRun).Spec.OaatGroup,
	}}}
}

// groupsNaming maps an object to the groups in its namespace that name it, by the index.
func (r *OaatGroupReconciler) groupsNaming(index string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		groups := &v1alpha1.OaatGroupList{}
		if err := r.List(ctx, groups, client.InNamespace(obj.GetNamespace()), client.MatchingFields{index: obj.GetName()}); err != nil {
			log.FromContext(ctx).Error(err, "Cannot list the groups that name an object", "index", index, "object", klog.KObj(obj))
			return nil
		}
		requests := make([]reconcile.Request, 0, len(groups.Items))
		for i := range groups.Items {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&groups.Items[i])})
		}
		return requests
	}
}
