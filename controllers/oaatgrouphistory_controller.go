package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
)

// OaatGroupHistoryReconciler deletes each OaatGroupHistory at its expiry: the history of a
// deleted group is kept for a bounded time only.
type OaatGroupHistoryReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	client.Client
	// Clock is the time source of the expiry.
	Clock clock.PassiveClock
}

// Reconcile deletes the record if it has expired, else looks at it again at its expiry.
func (r *OaatGroupHistoryReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	record := &v1alpha1.OaatGroupHistory{}
	if err := r.Get(ctx, req.NamespacedName, record); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := r.Clock.Now()
	if !history.Expired(record, now) {
		return ctrl.Result{RequeueAfter: record.Spec.ExpiresAt.Sub(now)}, nil
	}
	err := r.Delete(ctx, record, client.Preconditions{UID: &record.UID, ResourceVersion: &record.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return ctrl.Result{}, fmt.Errorf("deleting the expired OaatGroupHistory: %w", err)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler: it runs on every change of an OaatGroupHistory.
func (r *OaatGroupHistoryReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.OaatGroupHistory{}).
		Named("oaatgrouphistory").
		Complete(r)
}
