package planner

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// checkReady sets the Ready condition and reports whether a run may start: the spec is valid, the
// OaatType exists and makes a pod, and no pod creation failure is still backing off. When no run
// may start it returns when to look again (see retry.go).
func (d *decision) checkReady() (ready bool, retryAt time.Time) {
	if reason, text := d.problem(); reason != "" {
		d.setReady(metav1.ConditionFalse, reason, text)
		return false, d.notReadyRetryAt()
	}
	prev := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionReady)
	if prev != nil && prev.Reason == string(v1alpha1.ReasonPodCreateFailed) && d.pods.current == nil {
		return d.retryDue(prev)
	}
	if prev != nil && prev.Reason == string(v1alpha1.ReasonStatusRejected) && !d.in.StatusRefusedAt.IsZero() {
		refused := d.in.StatusRefusedAt
		if retryAt := refused.Add(retryWait(refused.Sub(prev.LastTransitionTime.Time))); d.in.Now.Before(retryAt) {
			return false, retryAt
		}
		d.rejected = prev.DeepCopy()
	}
	d.setReady(metav1.ConditionTrue, v1alpha1.ReasonReady,
		fmt.Sprintf("OaatType %s found, %d items", d.group.Spec.OaatType, len(d.items)))
	return true, time.Time{}
}

// problem returns why the group cannot start items, or an empty reason.
func (d *decision) problem() (reason v1alpha1.Reason, text string) {
	if len(d.items) == 0 {
		text = "the group has no items: spec.oaatItems is empty and spec.oaatItemsFrom gives none"
		if len(d.itemProblems) > 0 {
			text += " (" + message.List(d.itemProblems, "; ") + ")"
		}
		return v1alpha1.ReasonInvalidSpec, text
	}
	if d.policyErr != nil {
		return v1alpha1.ReasonInvalidSpec, d.policyErr.Error()
	}
	if reason, text := d.typeProblem(d.in.Type, d.group.Spec.OaatType, ""); reason != "" {
		return reason, text
	}
	if v := d.group.Spec.Verify; v != nil {
		if reason, text := d.typeProblem(d.in.VerifyType, v.OaatType, " (spec.verify.oaatType)"); reason != "" {
			return reason, text
		}
	}
	return locks.Problem(d.group, d.in.Locks)
}

// typeProblem returns why the OaatType typ, found under name (nil when not found), cannot make
// the group's pods, or an empty reason; role says which of the spec's OaatTypes it is.
func (d *decision) typeProblem(typ *v1alpha1.OaatType, name, role string) (reason v1alpha1.Reason, text string) {
	if typ == nil {
		return v1alpha1.ReasonOaatTypeNotFound, fmt.Sprintf("OaatType %q%s not found in namespace %s",
			name, role, d.group.Namespace)
	}
	if typ.Spec.Type != "" && typ.Spec.Type != v1alpha1.OaatTypePod {
		return v1alpha1.ReasonInvalidOaatType, fmt.Sprintf("OaatType %s%s: spec.type %q is not supported, only Pod",
			typ.Name, role, typ.Spec.Type)
	}
	if _, err := podbuild.Build(podbuild.Input{Group: d.group, Template: typ.Spec.Template, Item: d.items[0], Run: 1}); err != nil {
		return v1alpha1.ReasonInvalidOaatType, fmt.Sprintf("OaatType %s%s: %v", typ.Name, role, err)
	}
	return "", ""
}

// setReady sets the Ready condition, with an event when its status or reason changes.
func (d *decision) setReady(status metav1.ConditionStatus, reason v1alpha1.Reason, text string) {
	prev := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionReady)
	changed := prev == nil || prev.Status != status || prev.Reason != string(reason)
	d.setCondition(v1alpha1.ConditionReady, status, reason, text)
	if !changed {
		return
	}
	if status == metav1.ConditionTrue {
		if prev != nil {
			d.event(corev1.EventTypeNormal, reason, "Group is ready: "+text)
		}
		return
	}
	d.event(corev1.EventTypeWarning, reason, text)
}

// keepRejected puts back the Ready condition saying StatusRejected, and takes back the event of
// Ready, when the pass that retries a refused status only asks its locks: the start that was
// refused has not been tried again yet, and a Ready that flips to True with the request and back
// to StatusRejected with the start would reset the refusal's age at each attempt, and with it the
// growing wait between them.
func (d *decision) keepRejected() {
	if d.rejected == nil {
		return
	}
	meta.SetStatusCondition(&d.plan.Status.Conditions, *d.rejected)
	d.plan.Events = slices.DeleteFunc(d.plan.Events, func(e Event) bool { return e.Reason == v1alpha1.ReasonReady })
}
