package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of spec.circuitBreaker.
const (
	// DefaultConsecutiveItemFailures is how many distinct items failing in a row open the breaker
	// when spec.circuitBreaker.consecutiveItemFailures is absent.
	DefaultConsecutiveItemFailures = 3
	// DefaultProbeInterval is the wait before the first probe when
	// spec.circuitBreaker.probeInterval is absent.
	DefaultProbeInterval Duration = "1m"
	// DefaultMaxProbeInterval is the longest wait between probes when
	// spec.circuitBreaker.maxProbeInterval is absent.
	DefaultMaxProbeInterval Duration = "1h"
)

// CircuitBreaker stops a group from spending a run, a failure count and a growing cool-off on
// every item while the target they all need (a NAS, a bucket, a repository) is down. When
// consecutiveItemFailures distinct items fail in a row the breaker opens: no item's failure count
// or cool-off grows, and one item at a time runs as a probe, on the breaker's own exponential
// schedule (probeInterval, doubling up to maxProbeInterval). The first success closes the breaker
// and the group goes on at once with its items in their usual order: no item waits for the
// cool-off of a failure that came before the breaker closed.
// The durations are compared in seconds as for backoff.maxCoolOff (see OaatGroupSpec).
// +kubebuilder:validation:XValidation:rule="(has(self.maxProbeInterval) ? self.maxProbeInterval : '1h').findAll('[0-9]+ *[a-z]+').map(t, int(t.find('[0-9]+')) * (t.find('[a-z]+').startsWith('w') ? 604800 : t.find('[a-z]+').startsWith('d') ? 86400 : t.find('[a-z]+').startsWith('h') ? 3600 : t.find('[a-z]+').startsWith('m') ? 60 : 1)).sum() >= (has(self.probeInterval) ? self.probeInterval : '1m').findAll('[0-9]+ *[a-z]+').map(t, int(t.find('[0-9]+')) * (t.find('[a-z]+').startsWith('w') ? 604800 : t.find('[a-z]+').startsWith('d') ? 86400 : t.find('[a-z]+').startsWith('h') ? 3600 : t.find('[a-z]+').startsWith('m') ? 60 : 1)).sum()",messageExpression=`'circuitBreaker.maxProbeInterval "' + (has(self.maxProbeInterval) ? self.maxProbeInterval : '1h') + '" is shorter than probeInterval "' + (has(self.probeInterval) ? self.probeInterval : '1m') + '": the cap of the probe interval cannot be below its first step'`
type CircuitBreaker struct {
	// consecutiveItemFailures is how many distinct items must fail in a row, with no success in
	// between, to open the breaker; absent means 3. An item that fails again before the breaker
	// opens counts once. A success, or a failure that exitCodes and reasons do not count (or
	// whose exit code is one of spec.exitCodes.doNotRetry), starts the count again; an interrupted run changes nothing. The failures that open the breaker are
	// recorded for their items as usual.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Consecutive item failures",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	ConsecutiveItemFailures int32 `json:"consecutiveItemFailures,omitempty"`

	// exitCodes are, when set, the exit codes of the failures that count towards opening the
	// breaker (for example the code the item exits with when it cannot reach its target). With
	// reasons too, a failure counts when either matches. Absent with reasons absent: every
	// failure counts.
	// +listType=set
	// +kubebuilder:validation:MaxItems=255
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=255
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Counted exit codes",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	ExitCodes []int32 `json:"exitCodes,omitempty"`

	// reasons are, when set, the reasons of the failures that count towards opening the breaker,
	// as status.items[].lastReason records them: a container's (Error, OOMKilled, ...) or the
	// operator's (DeadlineExceeded, PodNotFound). With exitCodes too, a failure counts when
	// either matches.
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Counted reasons",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Reasons []string `json:"reasons,omitempty"`

	// probeInterval is how long after the failure that opened the breaker the first probe
	// starts; each failed probe doubles the wait after it, up to maxProbeInterval. Absent means 1m.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Probe interval",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	ProbeInterval Duration `json:"probeInterval,omitempty"`

	// maxProbeInterval caps the wait between probes; absent means 1h. It cannot be shorter than
	// probeInterval.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Maximum probe interval",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	MaxProbeInterval Duration `json:"maxProbeInterval,omitempty"`
}

// BreakerState is the state of a group's circuit breaker.
// +kubebuilder:validation:Enum=Closed;Open
type BreakerState string

const (
	// BreakerClosed means that items run as usual; failures in a row are counted.
	BreakerClosed BreakerState = "Closed"
	// BreakerOpen means that one item at a time runs as a probe; no item's failure count grows.
	BreakerOpen BreakerState = "Open"
)

// CircuitBreakerStatus is the state of the group's circuit breaker, present while
// spec.circuitBreaker is set.
type CircuitBreakerStatus struct {
	// state is Closed (items run as usual) or Open (one probe at a time).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Breaker state",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	State BreakerState `json:"state,omitempty"`

	// failedItems are the distinct items that failed in a row (counted failures, see
	// spec.circuitBreaker.consecutiveItemFailures), in the order they failed; emptied by a
	// success or an uncounted failure, and when the breaker closes. While the breaker is open
	// they are the items whose failures opened it.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Items failed in a row",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	FailedItems []string `json:"failedItems,omitempty"`

	// openedAt is when the breaker opened; absent while it is closed.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Opened at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	OpenedAt *metav1.Time `json:"openedAt,omitempty"`

	// lastFailureReason is the reason of the last failure that counted, or of the last failed
	// probe (as status.items[].lastReason records it; at most 1024 characters).
	// +kubebuilder:validation:MaxLength=1024
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last failure reason",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	LastFailureReason string `json:"lastFailureReason,omitempty"`

	// lastFailureExitCode is the exit code of that failure, absent when it had none.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last failure exit code",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	LastFailureExitCode *int32 `json:"lastFailureExitCode,omitempty"`

	// nextProbeAt is, while the breaker is open, when the next probe may start: probeInterval
	// after the failure that opened it, then after each failed probe a wait that doubles, at
	// most maxProbeInterval. A probe also waits for the usual holds (a running item, a blackout
	// window, suspend, a lock).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Next probe at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	NextProbeAt *metav1.Time `json:"nextProbeAt,omitempty"`

	// closedAt is when the breaker last closed; absent while it is open and before it first
	// closes. An item whose last failure came before it is treated, for its next start, as
	// never having failed: the failures that opened the breaker, and those before, hold no
	// item in its cool-off once the target is back.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Closed at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	ClosedAt *metav1.Time `json:"closedAt,omitempty"`

	// failedProbes is how many probes have failed since the breaker opened.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Failed probes",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	FailedProbes int32 `json:"failedProbes,omitempty"`
}

// LockBreakerMode says whether a lock carries the circuit breaker of the groups naming it.
// +kubebuilder:validation:Enum=Shared;None
type LockBreakerMode string

const (
	// LockBreakerShared means that the lock carries the breaker of the groups naming it: when
	// it opens on one of them, all of them hold and one probe at a time runs for all.
	LockBreakerShared LockBreakerMode = "Shared"
	// LockBreakerNone means that the lock carries no breaker, as when spec.circuitBreaker is
	// absent.
	LockBreakerNone LockBreakerMode = "None"
)

// LockCircuitBreakerStatus is the state of the circuit breaker a lock carries for the groups
// naming it (spec.circuitBreaker: Shared). The groups write it: it opens with the breaker of the
// first of them to open, each failed probe pushes nextProbeAt, and the group whose probe succeeds
// closes it; every group naming the lock follows it.
type LockCircuitBreakerStatus struct {
	// state is Closed (the groups run as usual) or Open (they hold; one probe at a time runs
	// for all of them).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Breaker state",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	State BreakerState `json:"state,omitempty"`

	// openedBy is the group whose breaker opened the lock's, as namespace/name.
	// +kubebuilder:validation:MaxLength=317
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Opened by",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	OpenedBy string `json:"openedBy,omitempty"`

	// openedAt is when it opened (the breaker of openedBy opened then); absent while closed.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Opened at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	OpenedAt *metav1.Time `json:"openedAt,omitempty"`

	// lastFailureReason is the reason of the failure that opened it, or of the last failed probe
	// of any of the groups (at most 1024 characters).
	// +kubebuilder:validation:MaxLength=1024
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last failure reason",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	LastFailureReason string `json:"lastFailureReason,omitempty"`

	// lastFailureExitCode is the exit code of that failure, absent when it had none.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last failure exit code",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	LastFailureExitCode *int32 `json:"lastFailureExitCode,omitempty"`

	// nextProbeAt is, while open, when the next probe of any of the groups may start: the latest
	// that a group's breaker has set (after the failure that opened it, then after each failed
	// probe).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Next probe at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	NextProbeAt *metav1.Time `json:"nextProbeAt,omitempty"`

	// failedProbes is how many probes, of all the groups, have failed since it opened.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Failed probes",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	FailedProbes int32 `json:"failedProbes,omitempty"`

	// closedAt is when it last closed; absent while open. A group whose breaker opened before
	// closes its own then.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Closed at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	ClosedAt *metav1.Time `json:"closedAt,omitempty"`

	// closedBy is the group whose breaker closed it (a probe succeeded, a reset, its
	// spec.circuitBreaker removed), as namespace/name; absent while open.
	// +kubebuilder:validation:MaxLength=317
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Closed by",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	ClosedBy string `json:"closedBy,omitempty"`
}
