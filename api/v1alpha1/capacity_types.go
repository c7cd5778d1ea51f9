package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CapacityWindow is a time of day during which a lock's capacity is other than spec.capacity,
// for example more slots at night, when the backups' target is otherwise idle, or none during
// business hours. Its start, end, days and time zone are read as those of a group's blackout
// window (spec.blackoutWindows), by the same parser.
// +kubebuilder:validation:XValidation:rule="self.start != self.end",messageExpression=`'a capacity window from ' + self.start + ' to ' + self.end + ' is empty: end must differ from start (an end before the start crosses midnight)'`
type CapacityWindow struct {
	// start is when the window opens, as HH:MM on a 24-hour clock in timeZone.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Start (HH:MM)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	Start string `json:"start,omitempty"`

	// end is when the window closes, as HH:MM on a 24-hour clock in timeZone. An end before
	// start closes the window on the next day (22:00 to 06:00 crosses midnight); an end equal to
	// start is refused.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="End (HH:MM)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	End string `json:"end,omitempty"`

	// days are the days of the week on which the window opens; absent means every day. A window
	// that crosses midnight belongs to the day it opens on.
	// +listType=set
	// +kubebuilder:validation:MaxItems=7
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Days",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Days []Weekday `json:"days,omitempty"`

	// timeZone is the IANA time zone (for example Europe/Berlin) that start and end are read in;
	// absent means UTC. Across daylight-saving changes the window keeps its wall-clock times.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Time zone",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	TimeZone TimeZone `json:"timeZone,omitempty"`

	// capacity is the lock's capacity while the window is open, in place of spec.capacity; 0
	// starts no run under the lock. When windows overlap, the smallest capacity among the open
	// ones is in force. A capacity below the runs holding the lock stops none of them: they end
	// as they would, and no run starts until fewer than the capacity hold it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Capacity",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +required
	Capacity *int32 `json:"capacity,omitempty"`
}

// CapacityChange is the next change of a lock's capacity in force, by its spec.capacitySchedule.
type CapacityChange struct {
	// at is when the capacity changes.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Changes at",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	At *metav1.Time `json:"at,omitempty"`

	// capacity is the capacity in force from then on.
	// +kubebuilder:validation:Minimum=0
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Capacity from then",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	Capacity *int32 `json:"capacity,omitempty"`
}

// CapacityStatus is the capacity a lock's reconciler found in force at its last review.
type CapacityStatus struct {
	// capacityInForce is the capacity of the lock now: that of the open window of
	// spec.capacitySchedule with the smallest capacity, spec.capacity outside them.
	// +kubebuilder:validation:Minimum=0
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Capacity in force",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	CapacityInForce *int32 `json:"capacityInForce,omitempty"`

	// nextCapacityChange is when the capacity in force changes next, and to what; absent for a
	// lock without spec.capacitySchedule, and when no change comes within eight days.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Next capacity change",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	NextCapacityChange *CapacityChange `json:"nextCapacityChange,omitempty"`
}

// LockMode is how a run takes a lock.
// +kubebuilder:validation:Enum=Shared;Exclusive
type LockMode string

const (
	// LockShared takes slots of the lock beside the runs of other groups.
	LockShared LockMode = "Shared"
	// LockExclusive takes the lock alone: a run starts only when the lock has no holder.
	LockExclusive LockMode = "Exclusive"
)

// LockOption says how each run of a group takes one of its locks.
// +kubebuilder:validation:XValidation:rule="!has(self.mode) || self.mode != 'Exclusive' || !has(self.slots) || self.slots == 1",message="an Exclusive lock option takes the whole lock: slots applies to mode Shared only"
type LockOption struct {
	// lock names the lock as status.lockWait does: an OaatLock of spec.locks by its name, a
	// ClusterOaatLock of spec.clusterLocks as ClusterOaatLock/name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=269
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Lock",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	Lock string `json:"lock,omitempty"`

	// mode Shared (the default) takes slots of the lock beside the runs of other groups.
	// Exclusive takes it alone: a run starts only when the lock has no holder, and while the
	// group waits for it no group that began to wait later is granted a slot, so that the holders
	// drain; a shared waiter is passed over by at most one exclusive hold per exclusive waiter
	// that began waiting before it. The lock must allow it (its spec.exclusiveHolders: Allowed).
	// +kubebuilder:default=Shared
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Mode",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Shared","urn:alm:descriptor:com.tectonic.ui:select:Exclusive"}
	// +optional
	Mode LockMode `json:"mode,omitempty"`

	// slots is how many of the lock's slots each run takes, 1 when absent: the lock grants the
	// run only when that many are free, and counts them all while it holds the lock. At most the
	// lock's spec.maxSlotsPerRun; a run needing more slots than the capacity in force waits
	// (spec.capacitySchedule) without holding back the groups behind it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Slots",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	Slots int32 `json:"slots,omitempty"`
}

// ExclusiveHolders says whether a lock lets groups take it Exclusive.
// +kubebuilder:validation:Enum=Allowed;Refused
type ExclusiveHolders string

const (
	// ExclusiveAllowed lets the groups naming the lock take it Exclusive.
	ExclusiveAllowed ExclusiveHolders = "Allowed"
	// ExclusiveRefused refuses them: such a group is not Ready.
	ExclusiveRefused ExclusiveHolders = "Refused"
)

// LockBounds are what a lock lets the groups naming it ask in their spec.lockOptions, so that no
// group takes more of a shared lock by editing its own spec.
type LockBounds struct {
	// exclusiveHolders Allowed lets the groups naming the lock take it Exclusive
	// (spec.lockOptions); absent or Refused, a group asking for it exclusively is not Ready
	// (reason LockOptionRefused).
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Exclusive holders",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Allowed","urn:alm:descriptor:com.tectonic.ui:select:Refused"}
	// +optional
	ExclusiveHolders ExclusiveHolders `json:"exclusiveHolders,omitempty"`

	// maxSlotsPerRun is the most slots one run may take (spec.lockOptions[].slots), 1 when
	// absent; a group asking for more is not Ready (reason LockOptionRefused).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Most slots per run",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	MaxSlotsPerRun int32 `json:"maxSlotsPerRun,omitempty"`

	// maxPriority is the highest spec.priority of a group that the lock honours, 0 when absent:
	// a group of a higher priority waits as one of maxPriority. For an OaatLock it bounds the
	// groups of its namespace, for a ClusterOaatLock those of every namespace. Absent, the lock
	// serves its queue in the order of waiting, whatever the groups' priority.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Highest priority honoured",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	MaxPriority *int32 `json:"maxPriority,omitempty"`
}
