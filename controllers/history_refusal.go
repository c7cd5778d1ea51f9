package controllers

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// historyLoss is why a group being deleted goes without its record.
type historyLoss struct {
	// reason is the label of oaat_group_histories_lost_total (history.LostUnauthorized or
	// history.LostRefused).
	reason string
	// why says it to a person, the API server's refusal included.
	why string
}

// historyRefused decides about a record the API server refused for good (history.Transient is
// false; the rule is history's). A Forbidden that the operator's own rights explain (a
// SelfSubjectAccessReview, which every authenticated user may make, says it may not create
// OaatGroupHistories in the namespace) lets the group go at once. Any other refusal waits
// RefusalWait from the first one, which the condition HistoryKept keeps in the group's status (a
// restart or a failover goes on with the same wait), trying again every history.RefusalRetry: it
// returns no loss and when to try again, or, once the wait is over, the loss.
func (r *OaatGroupReconciler) historyRefused(ctx context.Context, group *v1alpha1.OaatGroup, refusal error) (*historyLoss, ctrl.Result, error) {
	if apierrors.IsForbidden(refusal) {
		allowed, err := r.mayCreateHistory(ctx, group.Namespace)
		switch {
		case err != nil:
			log.FromContext(ctx).Error(err, "Cannot tell whether the operator may create OaatGroupHistories: the refusal is waited out")
		case !allowed:
			return &historyLoss{reason: history.LostUnauthorized, why: fmt.Sprintf(
				"the operator may not create OaatGroupHistories in namespace %s (%v)", group.Namespace, refusal)}, ctrl.Result{}, nil
		}
	}
	now := r.Clock.Now()
	var since time.Time
	if c := meta.FindStatusCondition(group.Status.Conditions, v1alpha1.ConditionHistoryKept); c != nil && c.Status == metav1.ConditionFalse {
		since = c.LastTransitionTime.Time
	}
	wait := r.HistoryRefusalWait
	over, retryIn := history.RefusalWaitOver(since, now, wait)
	if over {
		return &historyLoss{reason: history.LostRefused, why: fmt.Sprintf(
			"the API server refused it for %s (--history-refusal-wait): %v", wait, refusal)}, ctrl.Result{}, nil
	}
	if since.IsZero() {
		since = now
	}
	text := message.Condition(fmt.Sprintf("The API server refuses the group's OaatGroupHistory: %v; the operator tries again every %s, "+
		"and the group goes without its history at %s", refusal, history.RefusalRetry, since.Add(wait).UTC().Format(time.RFC3339)))
	patch := client.MergeFromWithOptions(group.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed := meta.SetStatusCondition(&group.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionHistoryKept,
		Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonHistoryRefused), Message: text,
		LastTransitionTime: metav1.NewTime(since), ObservedGeneration: group.Generation})
	if changed {
		if err := r.Status().Patch(ctx, group, patch); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return nil, ctrl.Result{RequeueAfter: conflictRetry, Priority: wakeUpPriority()}, nil
			}
			return nil, ctrl.Result{}, fmt.Errorf("writing condition %s: %w", v1alpha1.ConditionHistoryKept, err)
		}
	}
	log.FromContext(ctx).Info("The API server refuses the history of the deleted group; trying again",
		"reason", refusal.Error(), "goesWithoutAt", since.Add(wait))
	return nil, ctrl.Result{RequeueAfter: retryIn, Priority: wakeUpPriority()}, nil
}

// mayCreateHistory asks the API server whether the operator may create OaatGroupHistories in the
// namespace (a SelfSubjectAccessReview).
func (r *OaatGroupReconciler) mayCreateHistory(ctx context.Context, namespace string) (bool, error) {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create",
			Group: v1alpha1.GroupVersion.Group, Resource: "oaatgrouphistories"},
	}}
	if err := r.Create(ctx, review); err != nil {
		return false, fmt.Errorf("asking whether the operator may create OaatGroupHistories: %w", err)
	}
	return review.Status.Allowed, nil
}
