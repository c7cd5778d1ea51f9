package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NotifyTokenSecret is the Secret in the operator's namespace whose key token is the bearer token
// of the cluster-wide sink (--notify-sink): the one Secret the operator may read.
const NotifyTokenSecret = "oaat-operator-notify"

// MaxPendingNotifications bounds status.notifications.pending: a transition beyond it, while the
// sink acknowledges none, pushes out the oldest, which status.notifications.dropped counts.
const MaxPendingNotifications = 32

// MaxNotificationMessage bounds a transition's message, in bytes.
const MaxNotificationMessage = 256

// MaxNotificationReason bounds a transition's reason, in bytes (a container's reason, which the
// operator does not choose, may be longer).
const MaxNotificationReason = 64

// NotifyEvent is a kind of transition of a group that the operator sends as a CloudEvent.
// +kubebuilder:validation:Enum=RunFailed;ItemParked;BreakerOpened;BreakerClosed;AtRisk;VerificationFailed
// +kubebuilder:validation:MaxLength=32
type NotifyEvent string

// Notify events. The CloudEvent's type is io.oaat.<the event in lower case>, for example
// io.oaat.runfailed.
const (
	// NotifyRunFailed: an item's run failed (it counts as a failure).
	NotifyRunFailed NotifyEvent = "RunFailed"
	// NotifyItemParked: an item was parked after spec.maxConsecutiveFailures failures in a row.
	NotifyItemParked NotifyEvent = "ItemParked"
	// NotifyBreakerOpened: the group's circuit breaker opened.
	NotifyBreakerOpened NotifyEvent = "BreakerOpened"
	// NotifyBreakerClosed: the group's circuit breaker closed again.
	NotifyBreakerClosed NotifyEvent = "BreakerClosed"
	// NotifyAtRisk: condition AtRisk became True (an item or a round is forecast late).
	NotifyAtRisk NotifyEvent = "AtRisk"
	// NotifyVerificationFailed: a verification of an item's run (spec.verify) failed.
	NotifyVerificationFailed NotifyEvent = "VerificationFailed"
)

// NotifyEvents returns every NotifyEvent.
func NotifyEvents() []NotifyEvent {
	return []NotifyEvent{NotifyRunFailed, NotifyItemParked, NotifyBreakerOpened, NotifyBreakerClosed, NotifyAtRisk, NotifyVerificationFailed}
}

// Notify sends the group's transitions as CloudEvents to a sink of the group's own, besides the
// cluster-wide sink of the manager's configuration (--notify-sink). The operator only sends to a
// sink whose URL starts with one of the prefixes the cluster's administrator allows
// (--notify-group-sink-prefixes); any other makes condition Notified False with reason
// SinkNotAllowed, so that a user cannot make the operator reach what the user could not.
type Notify struct {
	// sink is the URL the CloudEvents are sent to (HTTP POST, structured mode, JSON), without
	// credentials: a per-group sink takes none.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHost() != ''",message="notify.sink must be an absolute http or https URL"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Sink",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	Sink string `json:"sink,omitempty"`

	// events are the transitions sent to sink; absent means all of them. The cluster-wide sink
	// receives all of them regardless.
	// +listType=set
	// +kubebuilder:validation:MaxItems=6
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Events",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Events []NotifyEvent `json:"events,omitempty"`
}

// NotificationsStatus is the group's outbox of transitions to send: written by the group's
// reconciler alone, before anything is sent, and emptied up to what the sinks acknowledged. A
// transition stays in it until every sink it is for acknowledged it, so that a manager that
// stops before it knows re-sends it (at least once; a CloudEvent's id, the group's UID and the
// transition's sequence, lets a receiver drop the second copy).
type NotificationsStatus struct {
	// next is the sequence number the next transition gets.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Next notification",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	Next int64 `json:"next,omitempty"`

	// pending are the transitions not yet acknowledged, oldest first, at most 32.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pending notifications",xDescriptors={"urn:alm:descriptor:text"}
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Pending []Transition `json:"pending,omitempty"`

	// dropped is how many transitions were pushed out of pending unsent, since the group was
	// created: the one case where the operator does not send a transition (a sink down for
	// longer than 32 transitions).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Dropped notifications",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	Dropped int64 `json:"dropped,omitempty"`
}

// Transition is a change of a group that the operator sends as a CloudEvent.
type Transition struct {
	// seq is the transition's sequence number in the group.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Sequence",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Seq int64 `json:"seq"`
	// event is what happened.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Event",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Event NotifyEvent `json:"event"`
	// item is the item it concerns; empty for the group's own (the breaker, AtRisk).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Item",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Item string `json:"item,omitempty"`
	// time is when the operator saw it.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Time",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Time metav1.Time `json:"time"`
	// reason is the reason of the condition or outcome it comes from, cut to 64 bytes.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Reason",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says what happened, in at most 256 bytes.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Message",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Message string `json:"message,omitempty"`
}
