package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		if err := r.untrack(ctx, pod, a.pending); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// untrack removes the finalizer oaat.io/run-tracking from the pod, and that finalizer only, by a
// strategic merge patch that deletes it from the list ($deleteFromPrimitiveList) without a
// resourceVersion: the API server applies it to the pod as it is when the patch arrives, so that
// the kubelet's (kwok's) status writes, or another controller's finalizer, added or removed
// meanwhile, neither make it fail on a conflict nor are undone by it. A JSON merge patch would
// replace the whole list (dropping a finalizer added since the read), and a JSON patch that tests
// the finalizer's index fails when another finalizer before it comes or goes. Whatever else
// changed on the pod does not matter: the plan untracks only pods whose run is recorded in the
// status already written (or that are not the group's runs), and a pod's phase, once ended, stays.
// The pod's UID in the patch is a precondition (an immutable field: a patch that would change it
// is rejected), so that a pod of the same name created since is left alone. A pod gone meanwhile
// is left as it is. A pod read as it was when this manager removed the finalizer, no event of it
// come before the pass began, is skipped (expectations).
func (r *OaatGroupReconciler) untrack(ctx context.Context, pod *corev1.Pod, pending pending) error {
	if pending.untracking(pod) {
		return nil
	}
	uid, read := pod.UID, pod.ResourceVersion
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":                                 pod.UID,
		"$deleteFromPrimitiveList/finalizers": []string{v1alpha1.FinalizerRunTracking},
	}})
	if err != nil {
		return fmt.Errorf("encoding the removal of finalizer %s: %w", v1alpha1.FinalizerRunTracking, err)
	}
	err = r.Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch))
	if err == nil {
		r.expected.expectUntrack(uid, read, r.Clock.Now())
		return nil
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("removing finalizer %s from pod %s: %w", v1alpha1.FinalizerRunTracking, pod.Name, err)
}

// releasePods removes the finalizer from the pods with the group's label that the garbage
// collector (or anyone) is deleting, when no group of that name exists, or from all the pods the
// group controls when it is being deleted (owner, its UID): no run of theirs is recorded any more.
//
// A group being deleted lists its pods from the API server, not the cache: its finalizer goes
// after this pass, and a pod the cache has not seen yet (created a moment before the deletion,
// its watch event behind the group's) would keep its finalizer with no group left to release it
// until the garbage collector deletes it. One LIST per group deletion. A group that is gone has
// no finalizer to hold: its orphans are released as the cache sees them being deleted, each
// deletion an event that brings this pass again.
func (r *OaatGroupReconciler) releasePods(ctx context.Context, key types.NamespacedName, owner types.UID, pending pending) error {
	pods, err := r.releasablePods(ctx, key, owner != "")
	if err != nil {
		return fmt.Errorf("listing the pods of group %s: %w", key.Name, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		ref := metav1.GetControllerOf(pod)
		ours := owner != "" && ref != nil && ref.UID == owner
		orphan := owner == "" && pod.DeletionTimestamp != nil
		if (ours || orphan) && podbuild.Tracked(pod) {
			if err := r.untrack(ctx, pod, pending); err != nil {
				return err
			}
		}
	}
	return nil
}

// releasablePods lists the pods with the group's label: from the API server for a group being
// deleted, from the cache otherwise (releasePods).
func (r *OaatGroupReconciler) releasablePods(ctx context.Context, key types.NamespacedName, deleting bool) (*corev1.PodList, error) {
	if !deleting {
		return cachedGroupPods(ctx, r.Client, key.Namespace, key.Name)
	}
	pods := &corev1.PodList{}
	err := r.APIReader.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabels{v1alpha1.LabelGroup: key.Name})
	return pods, err
}
