package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// Item pods carry the finalizer oaat.io/run-tracking from their creation (podbuild.Build) until
// their run's outcome is in the group's status: a pod evicted, preempted or deleted while no
// reconcile sees it (the operator restarting, its own node drained at the same time) stays, ended,
// until its last state is read, so that a disruption is recorded as an interruption whatever the
// timing. Its removal is one write per run (planner.Plan.Untrack), made after the status. A group
// being deleted, or gone, releases all its pods, so that none waits for an owner that is no more.

// +kubebuilder:rbac:groups="",resources=pods,verbs=patch

// untrackPods removes the finalizer from the pods the plan untracks, once the status that records
// their runs is persisted.
func (r *OaatGroupReconciler) untrackPods(ctx context.Context, a *applying) (*ctrl.Result, error) {
	for _, pod := range a.plan.Untrack {
		if err := r.untrack(ctx, pod); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// untrack removes the finalizer oaat.io/run-tracking from a pod that has not changed since it was
// read (its other finalizers stay); a pod gone or changed meanwhile is left to the pass its watch
// event brings.
func (r *OaatGroupReconciler) untrack(ctx context.Context, pod *corev1.Pod) error {
	patch := client.MergeFromWithOptions(pod.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(pod, v1alpha1.FinalizerRunTracking)
	err := r.Patch(ctx, pod, patch)
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("removing finalizer %s from pod %s: %w", v1alpha1.FinalizerRunTracking, pod.Name, err)
}

// releasePods removes the finalizer from the pods with the group's label that the garbage
// collector (or anyone) is deleting, when no group of that name exists, or from all the pods the
// group controls when it is being deleted (owner, its UID): no run of theirs is recorded any more.
func (r *OaatGroupReconciler) releasePods(ctx context.Context, key types.NamespacedName, owner types.UID) error {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(key.Namespace),
		client.MatchingLabels{v1alpha1.LabelGroup: key.Name}); err != nil {
		return fmt.Errorf("listing the pods of group %s: %w", key.Name, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		ref := metav1.GetControllerOf(pod)
		ours := owner != "" && ref != nil && ref.UID == owner
		orphan := owner == "" && pod.DeletionTimestamp != nil
		if (ours || orphan) && podbuild.Tracked(pod) {
			if err := r.untrack(ctx, pod); err != nil {
				return err
			}
		}
	}
	return nil
}
