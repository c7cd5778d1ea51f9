package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FinalizerHistory is the finalizer the operator puts on each OaatGroup: when the group is
// deleted, the operator first writes the history of its items into an OaatGroupHistory of the
// same namespace and name, then removes the finalizer. A group whose namespace or whose
// OaatGroupHistory CRD is being deleted loses the finalizer without a record, and so does one
// whose record the API server refuses for good (ConditionHistoryKept).
const FinalizerHistory = "oaat.io/history"

// ConditionHistoryKept is, on a group being deleted, False (reason ReasonHistoryRefused) while
// the API server refuses its OaatGroupHistory for good: an admission webhook or policy denies it,
// or a ResourceQuota on count/oaatgrouphistories.oaat.io is used up. Its lastTransitionTime is
// when the refusals began, kept in the cluster so that a restart or a failover does not start
// the wait again: once the manager's --history-refusal-wait has passed since then, the group goes
// without its record (event ReasonHistoryLost). A refusal by the operator's own rights (RBAC) does
// not wait. The condition is absent otherwise.
const ConditionHistoryKept = "HistoryKept"

// Reasons of the events about a group's history (kept here, beside the kind they concern, with
// the same contract as those of conventions.go: wire format, added to, never renamed).
const (
	// ReasonHistoryAdopted (event): a new group took the history of its items from the
	// OaatGroupHistory of a deleted group of the same namespace, name and OaatType.
	ReasonHistoryAdopted Reason = "HistoryAdopted"
	// ReasonHistoryDiscarded (event): a new group found the OaatGroupHistory of a deleted group
	// of its namespace and name expired, or of another OaatType, adopted nothing and deleted it.
	ReasonHistoryDiscarded Reason = "HistoryDiscarded"
	// ReasonItemRenamed (event): an item took the history of the item it was renamed from
	// (spec.itemRenames).
	ReasonItemRenamed Reason = "ItemRenamed"
	// ReasonHistoryRefused (condition HistoryKept): the API server refuses the OaatGroupHistory
	// of the group being deleted for good; the message says why and until when the operator
	// tries again.
	ReasonHistoryRefused Reason = "HistoryRefused"
	// ReasonHistoryLost (Warning event): the group being deleted went without its
	// OaatGroupHistory, refused by the operator's rights or for longer than
	// --history-refusal-wait; the message says why. The metric oaat_group_histories_lost_total
	// counts them.
	ReasonHistoryLost Reason = "HistoryLost"
)

// ItemHistory is what outlives a deleted group of one of its items: the durable part of its
// ItemStatus. What belongs to the deleted group alone (the name of its last pod, which goes with
// the group; the generation an item was parked in; the wait, which is computed again) is not kept.
type ItemHistory struct {
	// name is the item.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Item",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Name string `json:"name,omitempty"`

	// lastSuccess is when the item's last successful run ended.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Last success",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastSuccess *metav1.Time `json:"lastSuccess,omitempty"`

	// lastFailure is when the item's last failed run ended.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Last failure",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastFailure *metav1.Time `json:"lastFailure,omitempty"`

	// failureCount is the number of failed runs since the last successful one.
	// +kubebuilder:validation:Minimum=0
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Failures since last success",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	FailureCount int32 `json:"failureCount,omitempty"`

	// lastStarted is when the item's last run was started.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Last started",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastStarted *metav1.Time `json:"lastStarted,omitempty"`

	// lastExitCode is the exit code of the item's last run, absent when it ended without one.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Last exit code",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastExitCode *int32 `json:"lastExitCode,omitempty"`

	// lastReason says why the item's last run ended as it did (ItemStatus.lastReason).
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Last reason",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastReason string `json:"lastReason,omitempty"`

	// recentRunSeconds are the durations, in seconds, of the item's latest finished runs that
	// were not interrupted, newest last (at most 5).
	// +kubebuilder:validation:MaxItems=5
	// +listType=atomic
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Recent run seconds",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	RecentRunSeconds []int64 `json:"recentRunSeconds,omitempty"`

	// lastVerified is when the item's newest successful verification (spec.verify) ended.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Last verified",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastVerified *metav1.Time `json:"lastVerified,omitempty"`

	// verifiedRunFinishedAt is when the run that the newest successful verification verified
	// ended.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Verified run finished at",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	VerifiedRunFinishedAt *metav1.Time `json:"verifiedRunFinishedAt,omitempty"`

	// lastVerifyFailure is when the item's newest failed verification ended.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Last verification failure",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastVerifyFailure *metav1.Time `json:"lastVerifyFailure,omitempty"`
}

// OaatGroupHistorySpec is the history of a deleted OaatGroup, as the operator wrote it when the
// group was deleted.
type OaatGroupHistorySpec struct {
	// groupUID is the UID of the deleted group.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Group UID",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	GroupUID string `json:"groupUID,omitempty"`

	// oaatType is the deleted group's spec.oaatType. A new group adopts the history only if it
	// names the same OaatType: under another type, running an item means other work, and the
	// history of the old work says nothing about when the new one is due.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Oaat type",xDescriptors={"urn:alm:descriptor:io.kubernetes:oaat.io:v1alpha1:OaatType"}
	// +required
	OaatType string `json:"oaatType,omitempty"`

	// deletedAt is when the operator saw the group deleted and wrote this record.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Deleted at",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	DeletedAt metav1.Time `json:"deletedAt"`

	// expiresAt is when the record is of no use any more: the operator deletes it then, and a
	// group created later adopts nothing of it. deletedAt plus the manager's --history-retention
	// (7 days unless set).
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Expires at",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	ExpiresAt metav1.Time `json:"expiresAt"`

	// runCount is the deleted group's status.runCount. A new group that adopts the record goes on
	// numbering its runs from it, so that its run numbers (and pod names) do not repeat the
	// deleted group's.
	// +kubebuilder:validation:Minimum=0
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Runs started",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	RunCount int64 `json:"runCount,omitempty"`

	// items is the history of the deleted group's items, as its status.items held it, one entry
	// per name; atomic, as status.items is.
	// +kubebuilder:validation:MaxItems=1000
	// +listType=atomic
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Item history",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Items []ItemHistory `json:"items,omitempty"`
}

// OaatGroupHistory keeps the history of the items of a deleted OaatGroup for a bounded time
// (spec.expiresAt), so that a group re-created with the same namespace and name (a GitOps tool
// replacing it, a delete and apply again, a restore without status) runs no item before its
// frequency or its schedule says so. The operator writes it when the group is deleted (through
// the finalizer oaat.io/history), a new group of the same namespace, name and OaatType adopts
// the history of the items it still has on its first pass and then deletes the record, and an
// unadopted record is deleted at its expiry. Users do not need to write it; they may delete it
// to make a re-created group start afresh.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=oagh,categories=oaat
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.oaatType`
// +kubebuilder:printcolumn:name="Runs",type=integer,JSONPath=`.spec.runCount`
// +kubebuilder:printcolumn:name="Deleted",type=date,JSONPath=`.spec.deletedAt`
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.spec.expiresAt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Oaat Group History",resources={{OaatGroup,v1alpha1}}
type OaatGroupHistory struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata; the name is the deleted group's.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the deleted group's history.
	// +required
	Spec OaatGroupHistorySpec `json:"spec"`

	// status is empty: a record is written whole and has no observed state. (The field exists for
	// the tools that expect one of every kind, operator-sdk's CSV generation among them.)
	// +optional
	Status OaatGroupHistoryStatus `json:"status,omitempty,omitzero"`
}

// OaatGroupHistoryStatus is the empty status of an OaatGroupHistory.
type OaatGroupHistoryStatus struct{}

// OaatGroupHistoryList is a list of OaatGroupHistories.
// +kubebuilder:object:root=true
type OaatGroupHistoryList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items is the list of OaatGroupHistories.
	Items []OaatGroupHistory `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OaatGroupHistory{}, &OaatGroupHistoryList{})
}
