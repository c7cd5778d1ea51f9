package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxSourceResult is the most bytes of a run's termination message that its verification gets
// (status.pendingVerification.result, OAAT_SOURCE_RESULT); a longer message is cut.
const MaxSourceResult = 1024

// Verify runs, after an item's run succeeds, a verification of what the run made: for a backup,
// a restore of the snapshot it took and a comparison with the data. The verification is a pod
// of another OaatType, run for the same item; it takes the group's next turn (still one pod of
// the group at a time) and the group's locks, and its outcome is recorded apart from the item's
// runs (status.items[].lastVerified, lastVerifyFailure, verifiedRunFinishedAt): a failed
// verification never counts as a failure of the item's run.
type Verify struct {
	// oaatType is the name of the OaatType, in the group's namespace, whose pod template runs the
	// verification. Its pod gets the item as the runs' pods do ({{oaat_item}}, OAAT_ITEM), and the
	// verified run's facts as environment variables: OAAT_SOURCE_POD (the run's pod),
	// OAAT_SOURCE_FINISHED_AT (RFC 3339), OAAT_SOURCE_EXIT_CODE and OAAT_SOURCE_RESULT, the run's
	// termination message (for example a snapshot ID), at most 1 KiB, given as an environment
	// variable only and never substituted into a command, as items are not.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Verification type",xDescriptors={"urn:alm:descriptor:io.kubernetes:oaat.io:v1alpha1:OaatType"}
	// +required
	OaatType string `json:"oaatType,omitempty"`

	// every is how long after an item's last successful verification its next success is
	// verified again; absent or 0 means after each success. Runs that succeed within that time
	// are not verified.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Every",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Every Duration `json:"every,omitempty"`

	// onFailure says what a failed verification does besides its Warning event, condition
	// Verified and metrics: RerunItem (absent) makes the item due again once spec.failureCoolOff
	// has passed since the failed verification, so that a new run replaces what could not be
	// verified; AlertOnly leaves the item's schedule as it is.
	// +kubebuilder:default=RerunItem
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="On failure",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:RerunItem","urn:alm:descriptor:com.tectonic.ui:select:AlertOnly"}
	// +optional
	OnFailure VerifyOnFailure `json:"onFailure,omitempty"`
}

// VerifyOnFailure says what a failed verification does to the item's schedule.
// +kubebuilder:validation:Enum=RerunItem;AlertOnly
type VerifyOnFailure string

const (
	// VerifyRerunItem makes the item due again after a failed verification, once spec.failureCoolOff has passed.
	VerifyRerunItem VerifyOnFailure = "RerunItem"
	// VerifyAlertOnly leaves the item's schedule as it is after a failed verification.
	VerifyAlertOnly VerifyOnFailure = "AlertOnly"
)

// RunPurpose says what the group's current run does.
// +kubebuilder:validation:Enum=Run;Verify
type RunPurpose string

const (
	// PurposeRun is a run of the item (the OaatType of spec.oaatType).
	PurposeRun RunPurpose = "Run"
	// PurposeVerify is a verification of the item's last successful run (spec.verify).
	PurposeVerify RunPurpose = "Verify"
)

// PendingVerification is the verification that an item's successful run made due, with the
// facts of that run its pod gets. A group has at most one: it takes the group's next turn, before
// any other run could succeed and make another.
type PendingVerification struct {
	// item is the item whose run is to be verified.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Verified item",xDescriptors={"urn:alm:descriptor:text"}
	// +kubebuilder:validation:MaxLength=253
	// +required
	Item string `json:"item"`

	// podName is the pod of the run to verify (OAAT_SOURCE_POD).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Verified pod",xDescriptors={"urn:alm:descriptor:text"}
	// +kubebuilder:validation:MaxLength=253
	// +required
	PodName string `json:"podName"`

	// finishedAt is when that run ended (OAAT_SOURCE_FINISHED_AT); it becomes the item's
	// verifiedRunFinishedAt once the verification succeeds.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Verified run finished at",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	FinishedAt metav1.Time `json:"finishedAt"`

	// exitCode is that run's exit code (OAAT_SOURCE_EXIT_CODE), absent when it had none.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Verified exit code",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`

	// result is that run's termination message (OAAT_SOURCE_RESULT), cut to 1 KiB; kept only
	// until the verification has run.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Verified result",xDescriptors={"urn:alm:descriptor:text"}
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Result string `json:"result,omitempty"`
}

// VerificationFailing reports whether the item's newest verification (spec.verify) failed: its
// last failed verification came after its last successful one.
func (it *ItemStatus) VerificationFailing() bool {
	return it.LastVerifyFailure != nil && (it.LastVerified == nil || it.LastVerified.Before(it.LastVerifyFailure))
}
