package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OaatLockSpec says how many item pods of the groups naming the lock may be live at once.
type OaatLockSpec struct {
	// capacity is the most item pods of all the groups naming the lock (spec.locks) that may be
	// live at any instant; 1 makes the groups run one at a time among themselves.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Capacity",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	Capacity int32 `json:"capacity,omitempty"`

	// circuitBreaker Shared makes the lock carry the circuit breaker of the groups naming it
	// (spec.locks), for a lock that stands for a target they all need: when the breaker of one of
	// them opens, the lock records it in status.circuitBreaker and every group naming the lock
	// holds, its own breaker open too (a group without spec.circuitBreaker uses the breaker's
	// defaults); one probe at a time runs for all of them, as the lock gives one slot at a time
	// while its breaker is open, whatever its capacity; the first probe that succeeds, in any of
	// the groups, closes it for all. The groups count their failures and time their probes by
	// their own spec.circuitBreaker. Absent or None: the lock carries no breaker.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Circuit breaker",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Shared","urn:alm:descriptor:com.tectonic.ui:select:None"}
	// +optional
	CircuitBreaker LockBreakerMode `json:"circuitBreaker,omitempty"`
}

// LockHolder is a run that holds a slot of a lock. It is written before the run's pod is created
// and removed once the group has recorded the run's outcome.
type LockHolder struct {
	// group is the name of the OaatGroup whose run holds the slot; a group holds at most one
	// slot of a lock, since it runs one item at a time.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder group",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Group string `json:"group"`

	// namespace is the namespace of the group, in the holders of a ClusterOaatLock; absent in
	// the holders of an OaatLock, whose groups are of the lock's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder namespace",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// groupUID is the UID of that OaatGroup, so that a slot of a deleted group is not taken for a
	// slot of a new group of the same name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=36
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder group UID",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	GroupUID string `json:"groupUID"`

	// item is the item the run runs.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder item",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Item string `json:"item"`

	// pod is the name of the run's pod; the slot is the run's only while the group's
	// status.currentRun names this pod.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder pod",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Pod string `json:"pod"`

	// since is when the run took the slot.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holding since",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Since metav1.Time `json:"since"`
}

// OaatLockStatus is who holds the lock and how many wait for it.
type OaatLockStatus struct {
	// holders are the runs that hold a slot of the lock, at most spec.capacity of them.
	// +listType=map
	// +listMapKey=group
	// +kubebuilder:validation:MaxItems=1000
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holders",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Holders []LockHolder `json:"holders,omitempty"`

	// holderCount is the number of holders, for display.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder count",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	HolderCount int32 `json:"holderCount,omitempty"`

	// waitingGroups is the number of groups naming the lock that wait for locks (their
	// status.lockWait is set): a waiting group claims a slot of every lock it names, so that a
	// group needing two locks is not starved by groups needing one.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting groups",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	WaitingGroups int32 `json:"waitingGroups,omitempty"`

	// circuitBreaker is the state of the circuit breaker the lock carries for the groups naming
	// it (spec.circuitBreaker: Shared), written by the groups' reconciles: present once a group's
	// breaker has opened it, removed when the lock no longer carries a breaker.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Circuit breaker",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	CircuitBreaker *LockCircuitBreakerStatus `json:"circuitBreaker,omitempty"`
}

// OaatLock is a semaphore shared by OaatGroups of its namespace: at most spec.capacity item pods
// of all the groups that name it in spec.locks are live at any instant. A group takes all of its
// locks or none before it starts a run, and when a slot frees, the group that has waited longest
// gets it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=olock,categories=oaat
// +kubebuilder:printcolumn:name="Capacity",type=integer,JSONPath=`.spec.capacity`
// +kubebuilder:printcolumn:name="Holders",type=integer,JSONPath=`.status.holderCount`
// +kubebuilder:printcolumn:name="Waiting",type=integer,JSONPath=`.status.waitingGroups`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Oaat Lock",resources={{OaatGroup,v1alpha1}}
type OaatLock struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the lock's capacity; absent means capacity 1.
	// +optional
	Spec OaatLockSpec `json:"spec,omitempty"`

	// status lists the lock's holders.
	// +optional
	Status OaatLockStatus `json:"status,omitempty"`
}

// OaatLockList is a list of OaatLocks.
// +kubebuilder:object:root=true
type OaatLockList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items is the list of OaatLocks.
	Items []OaatLock `json:"items"`
}

// LockWait says that the group has an item ready to start that waits for locks.
type LockWait struct {
	// since is when the group began to wait; the group that has waited longest gets a freed slot
	// first.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting since",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Since metav1.Time `json:"since"`

	// locks are the locks the group waits for: full, or promised to a group that has waited
	// longer. An OaatLock is named by its name, a ClusterOaatLock as ClusterOaatLock/name.
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=269
	// +listType=set
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting for locks",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Locks []string `json:"locks"`
}

func init() {
	SchemeBuilder.Register(&OaatLock{}, &OaatLockList{})
}
