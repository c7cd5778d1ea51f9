package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The law of spec.adaptive, which the lock's reconciler applies to each run it released once its
// group recorded the run's end (docs/locks.md, "Capacity that adapts"). A run is judged against the
// median of its item's kept durations before it (status.items[].recentRunSeconds), when the item
// kept at least 3 and their median is at least 10 s; otherwise a success counts as fast.
const (
	// AdaptiveGrowAfter is how many fast successes in a row raise the adaptive capacity by one.
	AdaptiveGrowAfter = 5
	// AdaptiveFastFactor: a success within this many times its item's median is fast.
	AdaptiveFastFactor = 1.5
	// AdaptiveSlowFactor: a run over this many times its item's median halves the capacity, as
	// a counted failure does.
	AdaptiveSlowFactor = 3
)

// AdaptiveCapacity makes a lock's capacity follow the health of the target its groups share
// (additive increase, multiplicative decrease). The adaptive capacity starts at min. Each run the
// lock released is judged once its group recorded its end; a failure or slow run that took its
// slot before the last halving does not halve it again (that halving answered it):
//   - a success within 1.5 times its item's median duration is fast: 5 fast successes in a row
//     raise the capacity by one, up to max;
//   - a failure that the circuit breaker counts (spec.circuitBreaker's exitCodes and reasons of
//     the run's group; every failure without them; never one of spec.exitCodes.doNotRetry), or a
//     run over 3 times its item's median, halves the capacity in use (rounded up: 5 gives 3),
//     down to min;
//   - a success between 1.5 and 3 times the median starts the count of fast successes again;
//   - a failure the breaker does not count (the item's own bug) and an interrupted run change
//     nothing.
//
// The lock grants at most the capacity in use: the adaptive capacity, never above the capacity in
// force (spec.capacity or spec.capacitySchedule), and 1 while the breaker the lock carries, or
// that of a group naming it, is open. status.adaptive shows it, its last change and why.
// +kubebuilder:validation:XValidation:rule="!has(self.min) || self.min <= self.max",message="spec.adaptive.min is over spec.adaptive.max: halving stops at min, growing at max"
type AdaptiveCapacity struct {
	// min is the lowest adaptive capacity: halving stops there. 1 when absent. A capacity in
	// force below it (a window of spec.capacitySchedule) still bounds the lock.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Adaptive minimum",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	Min int32 `json:"min,omitempty"`

	// max is the highest adaptive capacity: growing stops there.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Adaptive maximum",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +required
	Max int32 `json:"max,omitempty"`
}

// MinOrDefault is min, 1 when absent.
func (a *AdaptiveCapacity) MinOrDefault() int { return max(int(a.Min), 1) }

// AdaptiveChangeReason says why the adaptive capacity changed.
// +kubebuilder:validation:Enum=FastSuccesses;CountedFailure;SlowRun
type AdaptiveChangeReason string

const (
	// AdaptiveFastSuccesses says that 5 fast successes in a row raised it by one.
	AdaptiveFastSuccesses AdaptiveChangeReason = "FastSuccesses"
	// AdaptiveCountedFailure says that a failure the circuit breaker counts halved it.
	AdaptiveCountedFailure AdaptiveChangeReason = "CountedFailure"
	// AdaptiveSlowRun says that a run over 3 times its item's median halved it.
	AdaptiveSlowRun AdaptiveChangeReason = "SlowRun"
)

// AdaptiveChange is the last change of a lock's adaptive capacity.
type AdaptiveChange struct {
	// at is when the lock's reconciler changed it.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Changed at",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	At metav1.Time `json:"at"`

	// from is the capacity in use before the change.
	// +kubebuilder:validation:Minimum=0
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="From",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	From int32 `json:"from"`

	// to is the adaptive capacity after it.
	// +kubebuilder:validation:Minimum=1
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="To",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	To int32 `json:"to"`

	// reason is why.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Reason",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	Reason AdaptiveChangeReason `json:"reason"`

	// message says it for a person: the run that caused it (group, item, pod) and its duration
	// against its item's median.
	// +kubebuilder:validation:MaxLength=1024
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Message",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	Message string `json:"message,omitempty"`
}

// AdaptiveCapacityStatus is the state of a lock's adaptive capacity (spec.adaptive), written by
// the lock's reconciler alone.
type AdaptiveCapacityStatus struct {
	// capacity is the adaptive capacity, within spec.adaptive's min and max.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Adaptive capacity",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	Capacity int32 `json:"capacity"`

	// capacityInUse is what the lock grants now: the adaptive capacity, at most the capacity in
	// force, and 1 while a breaker the lock or a group naming it carries is open.
	// +kubebuilder:validation:Minimum=0
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Capacity in use",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	CapacityInUse int32 `json:"capacityInUse"`

	// fastSuccesses are the fast successes in a row since the last change or slow run.
	// +kubebuilder:validation:Minimum=0
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Fast successes",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	FastSuccesses int32 `json:"fastSuccesses,omitempty"`

	// lastChange is the last change of the adaptive capacity; absent before the first.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last change",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastChange *AdaptiveChange `json:"lastChange,omitempty"`

	// ending are the runs the lock released whose end their group has not recorded yet (the pod
	// ended before the group's status said so): the lock judges each once it is recorded, and
	// drops it uncounted when the group is gone or the run never started.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Ending runs",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Ending []LockHolder `json:"ending,omitempty"`
}

// AdaptiveStatus is a lock's status.adaptive.
type AdaptiveStatus struct {
	// adaptive is the state of the lock's adaptive capacity; absent without spec.adaptive.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Adaptive capacity",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Adaptive *AdaptiveCapacityStatus `json:"adaptive,omitempty"`
}
