package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// Retry bounds of a group that is not ready. The wait grows with the time the group has been
// failing, so retries slow down geometrically without keeping a counter.
const (
	// MinRetry is the shortest wait before a group that is not ready is looked at again.
	MinRetry = 5 * time.Second
	// maxRetry is the longest.
	maxRetry = 5 * time.Minute
)

// checkReady sets the Ready condition and reports whether a run may start: the spec is valid, the
// OaatType exists and makes a pod, and no pod creation failure is still backing off.
func (d *decision) checkReady() bool {
	if reason, text := d.problem(); reason != "" {
		d.setReady(metav1.ConditionFalse, reason, text)
		d.retryNotReady()
		return false
	}
	if prev := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionReady); prev != nil &&
		prev.Reason == v1alpha1.ReasonPodCreateFailed && d.pods.current == nil {
		return d.retryDue(prev)
	}
	d.setReady(metav1.ConditionTrue, v1alpha1.ReasonReady,
		fmt.Sprintf("OaatType %s found, %d items", d.group.Spec.OaatType, len(d.items)))
	return true
}

// problem returns why the group cannot start items, or an empty reason.
func (d *decision) problem() (reason, text string) {
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
	typ := d.in.Type
	if typ == nil {
		return v1alpha1.ReasonOaatTypeNotFound, fmt.Sprintf("OaatType %q not found in namespace %s",
			d.group.Spec.OaatType, d.group.Namespace)
	}
	if typ.Spec.Type != "" && typ.Spec.Type != v1alpha1.OaatTypePod {
		return v1alpha1.ReasonInvalidOaatType, fmt.Sprintf("OaatType %s: spec.type %q is not supported, only Pod",
			typ.Name, typ.Spec.Type)
	}
	if _, err := d.buildPod(d.items[0], 1); err != nil {
		return v1alpha1.ReasonInvalidOaatType, fmt.Sprintf("OaatType %s: %v", typ.Name, err)
	}
	return d.lockProblem()
}

// retryDue reports whether a pod creation that the API server refused may be tried again. Ready
// stays False with reason PodCreateFailed until a pod of a later attempt is seen, so that the
// wait between attempts (the time since the previous attempt grows with the time since the first
// failure) keeps growing while creation keeps failing.
func (d *decision) retryDue(failed *metav1.Condition) bool {
	firstFailure := failed.LastTransitionTime.Time
	lastAttempt := firstFailure
	for _, it := range d.plan.Status.Items {
		if it.LastStarted != nil && it.LastStarted.After(lastAttempt) {
			lastAttempt = it.LastStarted.Time
		}
	}
	retryAt := lastAttempt.Add(retryWait(lastAttempt.Sub(firstFailure)))
	if d.in.Now.Before(retryAt) {
		d.requeueAt(retryAt)
		return false
	}
	return true
}

// retryNotReady looks at a group that is not ready again after a growing wait, in case what it
// lacks appears without an event that names it.
func (d *decision) retryNotReady() {
	cond := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionReady)
	failingFor := d.in.Now.Sub(cond.LastTransitionTime.Time)
	d.requeueAt(d.in.Now.Add(retryWait(failingFor)))
}

func retryWait(failingFor time.Duration) time.Duration {
	return min(max(failingFor, MinRetry), maxRetry)
}

// setReady sets the Ready condition, with an event when its status or reason changes.
func (d *decision) setReady(status metav1.ConditionStatus, reason, text string) {
	prev := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionReady)
	changed := prev == nil || prev.Status != status || prev.Reason != reason
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

// setPodCreateFailed marks status after the API server refused the pod of the run that status
// intends: the intent is withdrawn and Ready is False until a later attempt's pod exists.
func setPodCreateFailed(status *v1alpha1.OaatGroupStatus, now time.Time, err error) Event {
	text := fmt.Sprintf("Creating pod %s for item %q failed: %v", status.CurrentRun.PodName, status.CurrentRun.Item, err)
	status.CurrentRun = nil
	stamp := metav1.NewTime(now.Truncate(time.Second))
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonPodCreateFailed,
		Message: message.Condition(text), LastTransitionTime: stamp, ObservedGeneration: status.ObservedGeneration,
	})
	meta.SetStatusCondition(&status.Conditions, idleCondition(stamp, status.ObservedGeneration))
	return Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonPodCreateFailed, Message: message.Event(text)}
}

// setStatusRejected marks, in the status as last written, that the API server refused the group's
// new status as invalid: Ready is False with reason StatusRejected, and nothing starts until a new
// status can be written. It returns the event that reports it, nil when the status says so
// already (then it is unchanged and need not be written again), and how long to wait before the
// group is looked at again: the wait grows with the time since Ready turned False, a state kept
// in the cluster, so that a refusal that lasts is retried ever more slowly, up to maxRetry.
func setStatusRejected(status *v1alpha1.OaatGroupStatus, now time.Time, err error) (*Event, time.Duration) {
	prev := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
	if prev != nil && prev.Status == metav1.ConditionFalse && prev.Reason == v1alpha1.ReasonStatusRejected {
		return nil, retryWait(now.Sub(prev.LastTransitionTime.Time))
	}
	text := "The API server refused the group's new status; nothing starts until it can be written: " +
		message.Truncate(err.Error(), message.MaxEvent/2)
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonStatusRejected,
		Message: message.Condition(text), LastTransitionTime: metav1.NewTime(now.Truncate(time.Second)),
		ObservedGeneration: status.ObservedGeneration,
	})
	cond := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
	event := &Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonStatusRejected, Message: message.Event(text)}
	return event, retryWait(now.Sub(cond.LastTransitionTime.Time))
}

func (d *decision) setCondition(condType string, status metav1.ConditionStatus, reason, text string) {
	meta.SetStatusCondition(&d.plan.Status.Conditions, metav1.Condition{
		Type: condType, Status: status, Reason: reason, Message: message.Condition(text),
		LastTransitionTime: d.stamp, ObservedGeneration: d.group.Generation,
	})
}

func idleCondition(stamp metav1.Time, generation int64) metav1.Condition {
	return metav1.Condition{
		Type: v1alpha1.ConditionRunning, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonIdle,
		Message: "No item pod is active", LastTransitionTime: stamp, ObservedGeneration: generation,
	}
}

// setRunningCondition says whether an item pod is active.
func (d *decision) setRunningCondition() {
	cr := d.plan.Status.CurrentRun
	if cr == nil {
		meta.SetStatusCondition(&d.plan.Status.Conditions, idleCondition(d.stamp, d.group.Generation))
		return
	}
	d.setCondition(v1alpha1.ConditionRunning, metav1.ConditionTrue, v1alpha1.ReasonItemRunning,
		fmt.Sprintf("Item %q runs in pod %s", cr.Item, cr.PodName))
}

func (d *decision) buildPod(item string, run int64) (*corev1.Pod, error) {
	return podbuild.Build(podbuild.Input{Group: d.group, Template: d.in.Type.Spec.Template, Item: item, Run: run})
}
