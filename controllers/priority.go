package controllers

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duepriority"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// queue is the OaatGroup controller's work queue as its event handlers see it.
type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// prioritized is the event handler of every watch of the OaatGroup controller: it maps an event's
// object to the groups it concerns and queues each with the priority of package duepriority,
// read from the cache, so that the groups due longest are reconciled first (after a restart, every
// group of the informers' initial list and every pod of their runs come at once) and the echoes of
// the operator's own writes, which leave a group with nothing due, wait behind any group that has
// something due. A queue without priorities (a test's) gets plain adds.
type prioritized struct {
	r *OaatGroupReconciler
	// toGroups maps an object to the groups it concerns.
	toGroups func(context.Context, client.Object) []reconcile.Request
	// floor is the lowest priority an event of this watch queues with: duepriority.Idle for the
	// group and its pods, whose due-ness their state tells; duepriority.Unknown for the other
	// objects, whose change may make a group due that its status says is not.
	floor int
	// dueOnCreate queues the groups an object's creation concerns as due now (an OaatRun: a run
	// asked for now).
	dueOnCreate bool
	// synced says the cache had synced before the handler was called (the reprioritizer's): a
	// current run whose pod it lacks was never created.
	synced bool
}

// seen is what an event tells beyond its object.
type seen struct {
	// deleted: the object is gone (a delete event).
	deleted bool
	// dueNow queues the groups as due now, whatever their state.
	dueNow bool
	// initial: an event of the informers' initial list, while the cache may still lack the
	// group's other objects.
	initial bool
}

// Create implements handler.EventHandler.
func (h prioritized) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.enqueue(ctx, e.Object, seen{dueNow: h.dueOnCreate, initial: e.IsInInitialList}, q)
}

// Update implements handler.EventHandler.
func (h prioritized) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	h.enqueue(ctx, e.ObjectNew, seen{}, q)
}

// Delete implements handler.EventHandler.
func (h prioritized) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.enqueue(ctx, e.Object, seen{deleted: true}, q)
}

// Generic implements handler.EventHandler.
func (h prioritized) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.enqueue(ctx, e.Object, seen{}, q)
}

func (h prioritized) enqueue(ctx context.Context, obj client.Object, ev seen, q queue) {
	if obj == nil {
		return
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		h.r.expected.observe(pod, ev.deleted)
	}
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	for _, req := range h.toGroups(ctx, obj) {
		if !h.r.watches(req.Namespace) {
			continue // a holder of a ClusterOaatLock of another installation's namespace
		}
		if !ok {
			q.Add(req)
			continue
		}
		priority := duepriority.Due(0)
		if !ev.dueNow {
			priority = max(h.floor, h.priorityOf(ctx, req, obj, ev))
		}
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, req)
	}
}

// priorityOf is the priority of the group req names, as the cache holds it, obj being the object
// of the event (the group itself, or one of its pods, whose event state is newer than the cache's
// when it is the current run's). A group the cache does not hold, or that was deleted, is
// duepriority.Unknown: the reconcile finds out.
func (h prioritized) priorityOf(ctx context.Context, req reconcile.Request, obj client.Object, ev seen) int {
	r, deleted := h.r, ev.deleted
	group, isGroup := obj.(*v1alpha1.OaatGroup)
	switch {
	case isGroup && deleted:
		return duepriority.Unknown
	case !isGroup:
		group = &v1alpha1.OaatGroup{}
		if err := r.Get(ctx, req.NamespacedName, group); err != nil {
			return duepriority.Unknown
		}
	}
	cr := group.Status.CurrentRun
	pod, isPod := obj.(*corev1.Pod)
	if isPod && !deleted && !podbuild.Terminal(pod) && pod.DeletionTimestamp.IsZero() && (cr == nil || pod.Name != cr.PodName) {
		// A live pod that is not the group's current run (as far as the cache knows): a rogue
		// pod, which the group deletes at once; or its new run's pod seen before the status that
		// names it, which costs an early reconcile.
		return duepriority.Due(0)
	}
	if cr == nil {
		return duepriority.Priority(group, nil, false, r.Clock.Now())
	}
	if isPod && pod.Name == cr.PodName {
		return duepriority.Priority(group, pod, deleted, r.Clock.Now())
	}
	run := &corev1.Pod{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: group.Namespace, Name: cr.PodName}, run); err != nil {
		return h.withoutPod(group, ev)
	}
	return duepriority.Priority(group, run, false, r.Clock.Now())
}

// withoutPod is the priority of group, whose current run's pod the cache does not hold, for an
// event that is not the pod's own. With the cache synced (the reprioritizer, when this process
// starts leading) the pod was never created: the operator stopped between the run's intent and the
// create, no event of the pod will ever come, and the run has been due since the group's previous
// run ended (duepriority.NeverCreated). In the initial list the pod may simply not be listed yet: its
// own event will tell, and the reprioritizer, once the cache synced; Unknown until then. Otherwise
// the pod is on its way into the cache, just asked for: due since its intent, that is about now
// (ranking it by the previous run would put the echo of every start ahead of groups still waiting).
func (h prioritized) withoutPod(group *v1alpha1.OaatGroup, ev seen) int {
	now := h.r.Clock.Now()
	switch {
	case h.synced:
		return duepriority.NeverCreated(group, now)
	case ev.initial:
		return duepriority.Unknown
	default:
		return duepriority.Due(now.Sub(group.Status.CurrentRun.StartedAt.Time))
	}
}

// wakeUpPriority is the priority a group's own requeue (a wait that ends, a retry) is queued
// with: due now, since it is queued for the time its wait ends. An event that comes for the group
// before then hands it out at once at this priority too (the queue keeps the highest), which costs
// a reconcile among the groups due now, never ahead of one due longer.
func wakeUpPriority() *int {
	p := duepriority.Due(0)
	return &p
}

// Compile-time check that prioritized is an event handler of the controller's requests.
var _ handler.EventHandler = prioritized{}

// reprioritizer queues every group again, with its priority at that moment, when this process
// starts leading. A replica that was not the leader kept its caches and its queue warm
// (EnableWarmup): each group sits in the queue with the priority of its last event, which may be
// from long ago (a group idle then and due now). The queue keeps a key's highest priority, so
// adding again only raises the groups that became due meanwhile.
type reprioritizer struct {
	r     *OaatGroupReconciler
	cache cache.Cache
	queueHandover
}

// Start queues every group the cache holds again; the manager runs it once this process leads.
func (p *reprioritizer) Start(ctx context.Context) error {
	if !p.await(ctx) {
		return nil
	}
	if !p.cache.WaitForCacheSync(ctx) {
		return nil // stopped before the caches synced
	}
	groups := &v1alpha1.OaatGroupList{}
	if err := p.cache.List(ctx, groups); err != nil {
		return fmt.Errorf("listing the groups to queue them by priority: %w", err)
	}
	h := prioritized{r: p.r, toGroups: self, floor: duepriority.Idle, synced: true}
	for i := range groups.Items {
		h.enqueue(ctx, &groups.Items[i], seen{}, p.queue)
	}
	return nil
}

// queueHandover hands the controller's queue to a runnable of the manager that queues groups of
// its own accord (the reprioritizer, the forecaster). Ready once made by newQueueHandover.
type queueHandover struct {
	queued chan struct{} // closed once queue is set
	queue  queue
	once   sync.Once
}

func newQueueHandover() queueHandover { return queueHandover{queued: make(chan struct{})} }

// source is a source of the controller whose only effect is to hand over the controller's queue;
// the controller starts it with its other sources (when warming up, before it leads).
func (h *queueHandover) source() source.Source {
	return source.Func(func(_ context.Context, q queue) error {
		h.once.Do(func() {
			h.queue = q
			close(h.queued)
		})
		return nil
	})
}

// await waits until the queue is handed over; false when ctx ends first.
func (h *queueHandover) await(ctx context.Context) bool {
	select {
	case <-h.queued:
		return true
	case <-ctx.Done():
		return false
	}
}

// wakeIdle queues the group at the priority of a group with nothing due: what a runnable hands
// back to the group (a forecast, a delivery report) does not go ahead of a run.
func (h *queueHandover) wakeIdle(key types.NamespacedName) {
	req := reconcile.Request{NamespacedName: key}
	if pq, ok := h.queue.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		priority := duepriority.Idle
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, req)
		return
	}
	h.queue.Add(req)
}
