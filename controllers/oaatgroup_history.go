package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// The history of a group's items outlives the group (docs/history.md): the finalizer
// oaat.io/history, added on the group's first pass, lets the operator write an OaatGroupHistory
// when the group is deleted; a new group of the same namespace and name reads it on its own first
// pass (while it lacks the finalizer), the planner decides what it adopts (planner.carryHistory),
// and the record is deleted once the adopted history is persisted. The finalizer is added last in
// that pass, so that a pass that fails after the adoption reads the record again (adopting it
// again changes nothing) rather than leave it unadopted.

// +kubebuilder:rbac:groups=oaat.io,resources=oaatgroups,verbs=patch
// +kubebuilder:rbac:groups=oaat.io,resources=oaatgrouphistories,verbs=get;list;watch;create;update;delete

// previousHistory reads the OaatGroupHistory of the group's namespace and name from the API
// server, while the group lacks the finalizer (its first pass): nil otherwise or when there is
// none.
func (r *OaatGroupReconciler) previousHistory(ctx context.Context, group *v1alpha1.OaatGroup) (*v1alpha1.OaatGroupHistory, error) {
	if controllerutil.ContainsFinalizer(group, v1alpha1.FinalizerHistory) {
		return nil, nil
	}
	record := &v1alpha1.OaatGroupHistory{}
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(group), record)
	switch {
	case err == nil:
		return record, nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, nil
	}
	return nil, fmt.Errorf("reading the OaatGroupHistory of the group: %w", err)
}

// deleteAdoptedHistory deletes the record the plan adopted (or found of no use), once the status
// with the adopted history is written.
func (r *OaatGroupReconciler) deleteAdoptedHistory(ctx context.Context, a *applying) (*ctrl.Result, error) {
	record := a.plan.DeleteHistory
	if record == nil {
		return nil, nil
	}
	err := r.Delete(ctx, record, client.Preconditions{UID: &record.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return nil, fmt.Errorf("deleting OaatGroupHistory %s: %w", record.Name, err)
	}
	return nil, nil
}

// addHistoryFinalizer adds the finalizer oaat.io/history to a group that lacks it: one metadata
// write in the group's life (a status write cannot carry it), made last in the group's first
// pass.
func (r *OaatGroupReconciler) addHistoryFinalizer(ctx context.Context, a *applying) (*ctrl.Result, error) {
	if controllerutil.ContainsFinalizer(a.group, v1alpha1.FinalizerHistory) {
		return nil, nil
	}
	patch := client.MergeFromWithOptions(a.group.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(a.group, v1alpha1.FinalizerHistory)
	if err := r.Patch(ctx, a.group, patch); err != nil {
		if apierrors.IsConflict(err) {
			return requeueAfter(conflictRetry), nil
		}
		return nil, fmt.Errorf("adding finalizer %s: %w", v1alpha1.FinalizerHistory, err)
	}
	return nil, nil
}

// finalize writes the history of a group being deleted into its OaatGroupHistory, then removes
// the finalizer. The group's pods go with it through their owner reference, as without the
// finalizer. A record the API server refuses for good does not hold the deletion for ever
// (historyRefused): the group then goes without it, with a Warning event and the metric
// oaat_group_histories_lost_total, once the finalizer is removed.
func (r *OaatGroupReconciler) finalize(ctx context.Context, group *v1alpha1.OaatGroup) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(group, v1alpha1.FinalizerHistory) {
		return ctrl.Result{}, nil
	}
	var lost *historyLoss
	if err := r.keepHistory(ctx, group); err != nil {
		if history.Transient(err) {
			return ctrl.Result{}, err
		}
		var result ctrl.Result
		if lost, result, err = r.historyRefused(ctx, group, err); lost == nil {
			return result, err
		}
	}
	patch := client.MergeFromWithOptions(group.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(group, v1alpha1.FinalizerHistory)
	if err := r.Patch(ctx, group, patch); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("removing finalizer %s: %w", v1alpha1.FinalizerHistory, err)
	}
	if lost != nil {
		log.FromContext(ctx).Info("The deleted group went without its history", "reason", lost.reason, "why", lost.why)
		r.Recorder.Eventf(group, nil, corev1.EventTypeWarning, string(v1alpha1.ReasonHistoryLost), "Delete", "%s",
			message.Event(fmt.Sprintf("The history of the group's %d items was not kept: %s", len(group.Status.Items), lost.why)))
		r.Runs.HistoryLost(group.Namespace, lost.reason)
	}
	return ctrl.Result{}, nil
}

// keepHistory writes the record of the group being deleted. A record of the same name left by an
// earlier group is replaced; one this group wrote already (a pass that could not remove the
// finalizer) is kept. When the record cannot be written because its namespace or the
// OaatGroupHistory CRD is being deleted, or that CRD is gone, there is nothing to keep it in: the
// group goes without it, rather than hold up the deletion of its namespace or of the CRDs. Any
// other error is returned.
func (r *OaatGroupReconciler) keepHistory(ctx context.Context, group *v1alpha1.OaatGroup) error {
	record := history.Record(group, r.Clock.Now(), r.HistoryRetention)
	err := r.Create(ctx, record)
	switch {
	case err == nil:
		log.FromContext(ctx).Info("Kept the history of the deleted group", "oaatGroupHistory", record.Name,
			"items", len(record.Spec.Items), "expiresAt", record.Spec.ExpiresAt)
		return nil
	case historyCannotBeKept(err):
		log.FromContext(ctx).Info("Not keeping the history of the deleted group: there is nowhere to keep it", "reason", err.Error())
		return nil
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("writing OaatGroupHistory %s: %w", record.Name, err)
	}
	existing := &v1alpha1.OaatGroupHistory{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(record), existing); err != nil {
		return fmt.Errorf("reading OaatGroupHistory %s, which exists already: %w", record.Name, err)
	}
	if existing.Spec.GroupUID == record.Spec.GroupUID {
		return nil
	}
	existing.Labels, existing.Spec = record.Labels, record.Spec
	if err := r.Update(ctx, existing); err != nil && !historyCannotBeKept(err) {
		return fmt.Errorf("replacing OaatGroupHistory %s: %w", record.Name, err)
	}
	return nil
}

// historyCannotBeKept reports whether an error writing a record says that there is nowhere to
// keep it: its namespace is being deleted, the OaatGroupHistory CRD is being deleted (the API
// server refuses creates then) or is not installed.
func historyCannotBeKept(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || apierrors.IsMethodNotSupported(err) ||
		meta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}
