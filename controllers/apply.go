package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// conflictRetry is how soon a group whose status write lost an optimistic-lock race is looked at
// again, should the watch event of the winning write not come.
const conflictRetry = 2 * time.Second

// apply carries out a plan: status first (the intent of a run is persisted before its pod
// exists), then the pod, then deletions. Each event and the run metrics follow the write of the
// state they report, so that a lost race (conflict) reports nothing and the pass that wins reports
// each run once, whatever fails after it.
func (r *OaatGroupReconciler) apply(ctx context.Context, group *v1alpha1.OaatGroup, plan planner.Plan) (ctrl.Result, error) {
	for _, u := range plan.FinalRequests {
		if err := r.requests.update(ctx, u); err != nil {
			return ctrl.Result{}, err
		}
	}
	if !equality.Semantic.DeepEqual(group.Status, plan.Status) {
		group.Status = plan.Status
		if err := r.Status().Update(ctx, group); err != nil {
			// Someone wrote the group since it was read: the watch event of that write brings
			// the group back, with a fresh decision.
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, fmt.Errorf("writing status: %w", err)
		}
	}
	for _, run := range plan.Finished {
		r.Runs.Observe(group.Namespace, group.Name, run.Item, string(run.Result), run.Duration)
	}
	r.announce(ctx, group, plan.Events...)

	if plan.Create != nil {
		if err := r.createPod(ctx, group, plan.Create); err != nil {
			return r.withdrawRun(ctx, group, err)
		}
		log.FromContext(ctx).Info("Started item", "item", plan.Status.CurrentRun.Item, "pod", plan.Create.Name,
			"oaatRun", plan.Status.CurrentRun.OaatRun)
	}
	for _, u := range plan.OpenRequests {
		if err := r.requests.update(ctx, u); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, d := range plan.Delete {
		if err := r.deletePod(ctx, d.Pod); err != nil {
			return ctrl.Result{}, err
		}
		if d.Event != nil {
			r.announce(ctx, group, *d.Event)
		}
	}
	log.FromContext(ctx).V(1).Info("Reconciled", "runCount", group.Status.RunCount,
		"created", plan.Create != nil, "deleted", len(plan.Delete), "requeueAfter", plan.RequeueAfter)
	return ctrl.Result{RequeueAfter: plan.RequeueAfter}, nil
}

// createPod creates the pod of the run that status intends. A pod of that name that exists
// already is the run's pod when the group controls it (created by an earlier pass that did not
// see the result); any other pod of that name makes the run fail to start.
func (r *OaatGroupReconciler) createPod(ctx context.Context, group *v1alpha1.OaatGroup, pod *corev1.Pod) error {
	err := r.Create(ctx, pod)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := &corev1.Pod{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(pod), existing); err != nil {
		return fmt.Errorf("reading pod %s, which exists already: %w", pod.Name, err)
	}
	if !metav1.IsControlledBy(existing, group) {
		return fmt.Errorf("a pod named %s exists already and this group does not control it", pod.Name)
	}
	return nil
}

// withdrawRun withdraws the intent of a run whose pod could not be created, and retries later.
func (r *OaatGroupReconciler) withdrawRun(ctx context.Context, group *v1alpha1.OaatGroup, createErr error) (ctrl.Result, error) {
	event := planner.SetPodCreateFailed(&group.Status, r.Clock.Now(), createErr)
	if err := r.Status().Update(ctx, group); err != nil {
		return ctrl.Result{}, fmt.Errorf("withdrawing the run after %w: %w", createErr, err)
	}
	r.announce(ctx, group, event)
	return ctrl.Result{RequeueAfter: planner.MinRetry}, nil
}

// deletePod deletes a pod if it is still the one the plan saw.
func (r *OaatGroupReconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
}

// announce emits the events about the group and logs them, so that the operator's log tells the
// story of each group's runs too.
func (r *OaatGroupReconciler) announce(ctx context.Context, group *v1alpha1.OaatGroup, events ...planner.Event) {
	logger := log.FromContext(ctx)
	for _, e := range events {
		r.Recorder.Eventf(group, nil, e.Type, e.Reason, "Reconcile", "%s", e.Message)
		logger.Info(e.Message, "reason", e.Reason)
	}
}
