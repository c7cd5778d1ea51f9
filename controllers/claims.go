package controllers

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/itemsource"
)

// claimSourceIndex indexes OaatGroups that take items from PersistentVolumeClaims under
// takesClaims, so that a claim's event looks only at those groups of its namespace.
const (
	claimSourceIndex = "spec.oaatItemsFrom.persistentVolumeClaims"
	takesClaims      = "true"
)

// claimMetadata is the object the manager watches PersistentVolumeClaims as: their metadata only,
// which holds all a source reads (name, labels, deletionTimestamp), so that the cache stays small
// however large the claims' specs and statuses.
func claimMetadata() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}}
}

// claims lists, from the cache, the metadata of the claims of the group's namespace when a source
// of the group selects claims; none otherwise. The cache is current enough: a claim's change wakes
// the groups that select it (groupsSelectingClaim), which then read it again.
func (r *OaatGroupReconciler) claims(ctx context.Context, group *v1alpha1.OaatGroup) ([]metav1.PartialObjectMetadata, error) {
	if !itemsource.TakesClaims(&group.Spec) {
		return nil, nil
	}
	list := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaimList"}}
	if err := r.List(ctx, list, client.InNamespace(group.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the PersistentVolumeClaims of the namespace: %w", err)
	}
	return list.Items, nil
}

// takesClaimsValue is the claimSourceIndex value of a group.
func takesClaimsValue(obj client.Object) []string {
	if itemsource.TakesClaims(&obj.(*v1alpha1.OaatGroup).Spec) {
		return []string{takesClaims}
	}
	return nil
}

// groupsSelectingClaim maps a claim to the groups of its namespace whose sources select it by
// its labels. A failed list is logged and gives none, as groupsNaming's.
func (r *OaatGroupReconciler) groupsSelectingClaim(ctx context.Context, claim client.Object) []reconcile.Request {
	groups := &v1alpha1.OaatGroupList{}
	if err := r.List(ctx, groups, client.InNamespace(claim.GetNamespace()),
		client.MatchingFields{claimSourceIndex: takesClaims}); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the groups that take items from claims", "persistentVolumeClaim", klog.KObj(claim))
		return nil
	}
	var requests []reconcile.Request
	for i := range groups.Items {
		if itemsource.SelectsClaim(&groups.Items[i].Spec, claim.GetLabels()) {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&groups.Items[i])})
		}
	}
	return requests
}

// claimHandler queues, for a claim's change, the groups that select it by its new labels and
// those that selected it by its old ones: a claim unlabelled stops being their item.
type claimHandler struct {
	prioritized
}

// Update implements handler.EventHandler.
func (h claimHandler) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	h.enqueue(ctx, e.ObjectOld, seen{}, q)
	h.enqueue(ctx, e.ObjectNew, seen{}, q)
}

// claimChanged lets through the updates of a claim that may change whether it is an item: its
// labels, or its deletion starting. Creations and deletions pass.
var claimChanged = predicate.Or[client.Object](predicate.LabelChangedPredicate{}, predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	},
})
