package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// Fallback is what the controller applies instead when the API server refuses part of a plan.
type Fallback struct {
	// Status is the group's status to write.
	Status v1alpha1.OaatGroupStatus
	// Event reports Status once it is written; nil when Status is the status as last written,
	// which then need not be written again.
	Event *Event
	// RequeueAfter is when the group is to be looked at again.
	RequeueAfter time.Duration
}

// WithdrawRun is the fallback when the API server refused the pod of Create (refused says why),
// after Status was written: the intent of the run is withdrawn, Ready says why, and the next
// attempt waits (see checkReady). It is stamped with the time of the decision.
func (p Plan) WithdrawRun(refused error) Fallback {
	status := *p.Status.DeepCopy()
	event := setPodCreateFailed(&status, p.now, refused)
	return Fallback{Status: status, Event: &event, RequeueAfter: MinRetry}
}

// KeepRun is the fallback when creating the pod of Create failed without proof that it was not
// created (a timeout, a server error, a lost connection): the intent stays as Status, written
// already, records it, and the group is looked at again after MinRetry, when the pod is read from
// the API server; a pod that was never created is then recorded as not found.
func (p Plan) KeepRun() Fallback {
	return Fallback{Status: *p.Status.DeepCopy(), RequeueAfter: MinRetry}
}

// DecidedAt is the time of the decision (Input.Now), for what the controller records of the
// plan's application (Input.StatusRefusedAt).
func (p Plan) DecidedAt() time.Time { return p.now }

// StatusRejected is the fallback when the API server refused Status as invalid (rejected says
// why): written, the status as last written, says so in Ready, once; see setStatusRejected. It is
// stamped with the time of the decision.
func (p Plan) StatusRejected(written v1alpha1.OaatGroupStatus, rejected error) Fallback {
	status := *written.DeepCopy()
	event, retry := setStatusRejected(&status, p.now, rejected)
	return Fallback{Status: status, Event: event, RequeueAfter: retry}
}

// setPodCreateFailed marks status after the API server refused the pod of the run that status
// intends: the intent is withdrawn and Ready is False until a later attempt's pod exists.
func setPodCreateFailed(status *v1alpha1.OaatGroupStatus, now time.Time, err error) Event {
	text := fmt.Sprintf("Creating pod %s for item %q failed: %v", status.CurrentRun.PodName, status.CurrentRun.Item, err)
	status.CurrentRun = nil
	stamp := metav1.NewTime(now.Truncate(time.Second))
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonPodCreateFailed),
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
	if prev != nil && prev.Status == metav1.ConditionFalse && prev.Reason == string(v1alpha1.ReasonStatusRejected) {
		return nil, retryWait(now.Sub(prev.LastTransitionTime.Time))
	}
	text := "The API server refused the group's new status; nothing starts until it can be written: " +
		message.Truncate(err.Error(), message.MaxEvent/2)
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonStatusRejected),
		Message: message.Condition(text), LastTransitionTime: metav1.NewTime(now.Truncate(time.Second)),
		ObservedGeneration: status.ObservedGeneration,
	})
	cond := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
	event := &Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonStatusRejected, Message: message.Event(text)}
	return event, retryWait(now.Sub(cond.LastTransitionTime.Time))
}
