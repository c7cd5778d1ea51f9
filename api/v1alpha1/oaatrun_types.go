package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OaatRunPhase is where an on-demand run stands.
// +kubebuilder:validation:Enum=Pending;InProgress;Succeeded;Failed;Rejected
type OaatRunPhase string

const (
	// OaatRunPending means accepted, waiting for the group to be free (and its turn among the group's
	// on-demand runs, oldest first).
	OaatRunPending OaatRunPhase = "Pending"
	// OaatRunInProgress means the item's pod has been started for this on-demand run.
	OaatRunInProgress OaatRunPhase = "InProgress"
	// OaatRunSucceeded means the item's run succeeded.
	OaatRunSucceeded OaatRunPhase = "Succeeded"
	// OaatRunFailed means the item's run failed, or was stopped.
	OaatRunFailed OaatRunPhase = "Failed"
	// OaatRunRejected means the on-demand run cannot be served; status.reason says why.
	OaatRunRejected OaatRunPhase = "Rejected"
)

// Finished reports whether the phase is final: Succeeded, Failed or Rejected.
func (p OaatRunPhase) Finished() bool {
	return p == OaatRunSucceeded || p == OaatRunFailed || p == OaatRunRejected
}

// OaatRunSpec names the item to run now.
// +kubebuilder:validation:XValidation:rule="self.oaatGroup == oldSelf.oaatGroup && self.item == oldSelf.item && self.ignoreBlackoutWindows == oldSelf.ignoreBlackoutWindows",message="the group, the item and ignoreBlackoutWindows of an OaatRun cannot change: create another OaatRun"
type OaatRunSpec struct {
	// oaatGroup is the name of the OaatGroup, in the same namespace, whose item runs.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Oaat group",xDescriptors={"urn:alm:descriptor:io.kubernetes:oaat.io:v1alpha1:OaatGroup"}
	// +required
	OaatGroup string `json:"oaatGroup"`

	// item is the item to run; it must be one of the group's items.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Item",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	Item string `json:"item"`

	// ignoreBlackoutWindows lets the run start inside one of the group's blackout windows (and
	// keeps a window with stopRunning from stopping it). The group's other rules still apply:
	// one item at a time, suspend.
	// +kubebuilder:default=false
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Ignore blackout windows",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	// +optional
	IgnoreBlackoutWindows bool `json:"ignoreBlackoutWindows"`

	// ttlAfterFinished is how long the OaatRun is kept once finished (Succeeded, Failed or
	// Rejected); then it is deleted. Default 1h.
	// +kubebuilder:default="1h"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Time to live after finished",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	TTLAfterFinished Duration `json:"ttlAfterFinished,omitempty"`
}

// OaatRunStatus is where the on-demand run stands; once it has started, it follows its run.
type OaatRunStatus struct {
	// phase is Pending, InProgress, Succeeded, Failed or Rejected; absent until the operator has
	// seen the OaatRun.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Phase",xDescriptors={"urn:alm:descriptor:io.kubernetes.phase"}
	// +optional
	Phase OaatRunPhase `json:"phase,omitempty"`

	// reason is a one-word cause of the phase: for Rejected GroupNotFound, UnknownItem or
	// Duplicate; for Pending what the on-demand run waits for; for Succeeded and Failed the run's
	// reason (Completed, Error, DeadlineExceeded...).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Reason",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	Reason string `json:"reason,omitempty"`

	// message says the same for people.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Message",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	Message string `json:"message,omitempty"`

	// podName is the pod that runs the item for this on-demand run.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pod",xDescriptors={"urn:alm:descriptor:io.kubernetes:Pod"}
	// +optional
	PodName string `json:"podName,omitempty"`

	// exitCode is the exit code the run ended with, when a container reported one.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Exit code",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`

	// startedAt is when the item's pod was started for this on-demand run.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Started at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// finishedAt is when the on-demand run reached its final phase; the OaatRun is deleted
	// ttlAfterFinished later.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Finished at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// OaatRun is an on-demand run: a user's order for one run of an item of an OaatGroup now, outside
// its schedule ("back up this item now"), whose status then follows that run. The on-demand runs
// of a group are served oldest first, before the group's scheduled selection, and never break its
// one-at-a-time rule. An OaatRun moves from Pending to InProgress to Succeeded or Failed, or is
// Rejected (unknown group or item, or a duplicate of a pending one), and is deleted
// ttlAfterFinished after it finished.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=orun,categories=oaat
// +kubebuilder:printcolumn:name="Group",type=string,JSONPath=`.spec.oaatGroup`
// +kubebuilder:printcolumn:name="Item",type=string,JSONPath=`.spec.item`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Pod",type=string,JSONPath=`.status.podName`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Oaat Run",resources={{Pod,v1},{OaatGroup,v1alpha1}}
type OaatRun struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the group and the item to run.
	// +required
	Spec OaatRunSpec `json:"spec"`

	// status is where the on-demand run stands.
	// +optional
	Status OaatRunStatus `json:"status,omitempty"`
}

// OaatRunList is a list of OaatRuns.
// +kubebuilder:object:root=true
type OaatRunList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items is the list of OaatRuns.
	Items []OaatRun `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OaatRun{}, &OaatRunList{})
}
