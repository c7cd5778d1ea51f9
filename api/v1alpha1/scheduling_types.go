package v1alpha1

// BlackoutWindow is a time of day during which no item of the group starts, for example the
// hours when a database takes its own backups.
// +kubebuilder:validation:XValidation:rule="self.start != self.end",messageExpression=`'a blackout window from ' + self.start + ' to ' + self.end + ' is empty: end must differ from start (an end before the start crosses midnight)'`
type BlackoutWindow struct {
	// start is when the window opens, as HH:MM on a 24-hour clock in timeZone.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +kubebuilder:validation:MaxLength=5
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Start (HH:MM)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	Start string `json:"start"`

	// end is when the window closes, as HH:MM on a 24-hour clock in timeZone. An end before
	// start closes the window on the next day (22:00 to 02:00 crosses midnight); an end equal to
	// start is refused.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +kubebuilder:validation:MaxLength=5
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="End (HH:MM)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	End string `json:"end"`

	// days are the days of the week on which the window opens; absent means every day. A window
	// that crosses midnight belongs to the day it opens on.
	// +listType=set
	// +kubebuilder:validation:MaxItems=7
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Days",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Days []Weekday `json:"days,omitempty"`

	// timeZone is the IANA time zone (for example Europe/Berlin) that start and end are read in;
	// absent means UTC. Across daylight-saving changes the window keeps its wall-clock times.
	// A name that is not one of the operator's zones is refused.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Time zone",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	TimeZone TimeZone `json:"timeZone,omitempty"`

	// stopRunning stops the item pod that is still running when the window opens. Its run is
	// recorded as Interrupted: neither a success nor a failure, so the item keeps its place and
	// runs again after the window.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Stop running item",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	// +optional
	StopRunning bool `json:"stopRunning,omitempty"`

	// avoidOverrun keeps an item from starting when its expected run time (the longest of its
	// recent runs, status.items[].recentRunSeconds) would reach into the window.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Avoid overrun",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	// +optional
	AvoidOverrun bool `json:"avoidOverrun,omitempty"`
}

// Weekday is a day of the week.
// +kubebuilder:validation:Enum=Mon;Tue;Wed;Thu;Fri;Sat;Sun
type Weekday string

// BackoffPolicy says how a failed item's cool-off grows with its consecutive failures.
// +kubebuilder:validation:Enum=Fixed;Exponential
type BackoffPolicy string

const (
	// BackoffFixed waits failureCoolOff after every failure.
	BackoffFixed BackoffPolicy = "Fixed"
	// BackoffExponential waits failureCoolOff x 2^(failures-1), at most maxCoolOff.
	BackoffExponential BackoffPolicy = "Exponential"
)

// DefaultMaxCoolOff is the longest exponential cool-off when spec.backoff.maxCoolOff is absent.
const DefaultMaxCoolOff Duration = "1d"

// Backoff says how long a failed item waits before it may run again.
type Backoff struct {
	// policy is Fixed (every failure waits failureCoolOff, the original's behaviour) or
	// Exponential (the n-th consecutive failure waits failureCoolOff x 2^(n-1), at most
	// maxCoolOff).
	// +kubebuilder:default=Fixed
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Backoff policy",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Fixed","urn:alm:descriptor:com.tectonic.ui:select:Exponential"}
	// +optional
	Policy BackoffPolicy `json:"policy,omitempty"`

	// maxCoolOff caps the exponential cool-off; absent means 1d.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Maximum cool-off",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	MaxCoolOff Duration `json:"maxCoolOff,omitempty"`
}

// ExitCodes classify the exit codes of a failed item pod, in the spirit of a Job's pod failure
// policy. A pod counts by the non-zero exit codes of its containers.
// +kubebuilder:validation:XValidation:rule="!has(self.success) || !has(self.doNotRetry) || self.success.all(c, !(c in self.doNotRetry))",message="an exit code cannot be both in exitCodes.success and in exitCodes.doNotRetry"
type ExitCodes struct {
	// success are non-zero exit codes that mean success: a failed pod whose containers all
	// exited 0 or with one of these counts as succeeded.
	// +listType=set
	// +kubebuilder:validation:MaxItems=255
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=255
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Success exit codes",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Success []int32 `json:"success,omitempty"`

	// doNotRetry are exit codes that mean retrying cannot help: the item is parked (not started
	// again) until the group's spec changes, and the group's Parked condition names it.
	// +listType=set
	// +kubebuilder:validation:MaxItems=255
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=255
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Do-not-retry exit codes",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	DoNotRetry []int32 `json:"doNotRetry,omitempty"`
}

// GroupMode says whether items run again and again or once each.
// +kubebuilder:validation:Enum=Continuous;EachOnce
type GroupMode string

const (
	// ModeContinuous runs each item again every frequency, forever.
	ModeContinuous GroupMode = "Continuous"
	// ModeEachOnce runs each item until it succeeds once; then the group is Complete.
	ModeEachOnce GroupMode = "EachOnce"
)

// RunEvents says which finished runs of a group get an event.
// +kubebuilder:validation:Enum=All;Failures
type RunEvents string

const (
	// RunEventsAll sends an event for every finished run.
	RunEventsAll RunEvents = "All"
	// RunEventsFailures sends no event for a successful run; failed and interrupted runs keep
	// theirs.
	RunEventsFailures RunEvents = "Failures"
)

// PodHistory says how many finished pods to keep per item; older ones are deleted, so that the
// logs of recent runs stay readable without pods piling up.
type PodHistory struct {
	// succeeded is how many pods of succeeded runs to keep per item.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Succeeded pods kept per item",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	Succeeded *int32 `json:"succeeded,omitempty"`

	// failed is how many pods of failed runs to keep per item.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Failed pods kept per item",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	Failed *int32 `json:"failed,omitempty"`
}
