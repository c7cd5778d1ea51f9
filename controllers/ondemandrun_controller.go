package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/ondemand"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// OnDemandRunReconciler does for on-demand runs (OaatRuns) what their group cannot: it rejects an
// on-demand run whose group does not exist, and deletes finished ones once their time to live is
// over. Everything else about an on-demand run (queueing, running, its outcome) is decided with
// its group.
type OnDemandRunReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	client.Client
	// APIReader reads from the API server directly, to confirm that a group is really gone.
	APIReader client.Reader
	// Recorder emits events about on-demand runs.
	Recorder recorder.EventRecorder
	// Clock is the time source of every decision.
	Clock clock.PassiveClock
	// Runs counts on-demand runs that reach their final phase.
	Runs *metrics.RunMetrics

	onDemandRuns onDemandRunWriter
}

// +kubebuilder:rbac:groups=oaat.io,resources=oaatruns,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=oaat.io,resources=oaatruns/status,verbs=get;update;patch

// Reconcile rejects an on-demand run of a missing group and deletes an expired one: it gathers
// what the decision needs, lets ondemand.Decide decide, and applies the plan.
func (r *OnDemandRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	onDemandRun := &v1alpha1.OaatRun{}
	if err := r.Get(ctx, req.NamespacedName, onDemandRun); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("oaatRun", klog.KObj(onDemandRun)))
	in, err := r.gather(ctx, onDemandRun)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.apply(ctx, onDemandRun, ondemand.Decide(in))
}

// gather reads the snapshot of one decision: the time, once per pass, and, for an open on-demand
// run only, whether its group exists. The cache may not have seen a group created just before the
// OaatRun: the API server is asked.
func (r *OnDemandRunReconciler) gather(ctx context.Context, onDemandRun *v1alpha1.OaatRun) (ondemand.Input, error) {
	in := ondemand.Input{OnDemandRun: onDemandRun, Now: r.Clock.Now()}
	if !ondemand.NeedsGroup(onDemandRun) {
		return in, nil
	}
	group := &v1alpha1.OaatGroup{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: onDemandRun.Namespace, Name: onDemandRun.Spec.OaatGroup}, group)
	switch {
	case err == nil:
		in.GroupFound = true
	case !apierrors.IsNotFound(err):
		return ondemand.Input{}, fmt.Errorf("reading OaatGroup %s: %w", onDemandRun.Spec.OaatGroup, err)
	}
	return in, nil
}

// apply deletes the OaatRun if it is still the one that was read, or writes its final status.
func (r *OnDemandRunReconciler) apply(ctx context.Context, onDemandRun *v1alpha1.OaatRun, plan ondemand.Plan) (ctrl.Result, error) {
	switch {
	case plan.Delete:
		err := r.Delete(ctx, onDemandRun, client.Preconditions{UID: &onDemandRun.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("deleting the expired OaatRun: %w", err)
		}
		log.FromContext(ctx).V(1).Info("Deleted the expired OaatRun", "finishedAt", onDemandRun.Status.FinishedAt)
	case plan.Status != nil:
		err := r.onDemandRuns.update(ctx, planner.OnDemandRunUpdate{OnDemandRun: onDemandRun, Status: *plan.Status})
		if apierrors.IsConflict(err) {
			return ctrl.Result{}, nil // the change brings the OaatRun back
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: plan.RequeueAfter}, nil
}

// SetupWithManager registers the reconciler: it runs on changes of an on-demand run (OaatRun), and
// of a group for the on-demand runs that name it (a deleted group rejects its pending ones).
func (r *OnDemandRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.onDemandRuns = onDemandRunWriter{client: r.Client, recorder: r.Recorder, runs: r.Runs}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.OaatRun{}).
		Watches(&v1alpha1.OaatGroup{}, handler.EnqueueRequestsFromMapFunc(r.groupToOnDemandRuns)).
		Named("oaatrun").
		Complete(r)
}

// groupToOnDemandRuns maps a group to the on-demand runs that name it.
func (r *OnDemandRunReconciler) groupToOnDemandRuns(ctx context.Context, group client.Object) []reconcile.Request {
	list := &v1alpha1.OaatRunList{}
	if err := r.List(ctx, list, client.InNamespace(group.GetNamespace()),
		client.MatchingFields{oaatGroupIndex: group.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the OaatRuns of a group", "oaatGroup", klog.KObj(group))
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return requests
}
