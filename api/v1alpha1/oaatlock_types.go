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

	// capacitySchedule are times of day during which the lock's capacity is other than
	// spec.capacity (more slots at night, none during business hours): within an open window its
	// capacity is in force, the smallest of them when several are open; spec.capacity outside
	// them. status.capacityInForce and status.nextCapacityChange show the capacity now and the
	// next change. A cut below the runs holding the lock stops none of them: they drain, and no
	// run starts until fewer than the capacity hold it.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Capacity schedule",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	// +optional
	CapacitySchedule []CapacityWindow `json:"capacitySchedule,omitempty"`

	// LockBounds are what the groups naming the lock may ask in their spec.lockOptions.
	LockBounds `json:",inline"`

	// adaptive makes the capacity in use follow the health of the target the groups naming the
	// lock share, within its min and max and never above the capacity in force: one more slot
	// after 5 fast successes in a row, half as many after a failure the circuit breaker counts or
	// a run over 3 times its item's median (status.adaptive; docs/locks.md). Absent: the
	// capacity in force is used whole.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Adaptive capacity",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	// +optional
	Adaptive *AdaptiveCapacity `json:"adaptive,omitempty"`

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

// LockHolder is a run that holds a slot of a lock. The lock's reconciler writes it when it grants
// the group's request (status.lockWait), before the run's pod is created, and removes it once the
// group's status names the pod neither as its request nor as its current run.
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
	// status.lockWait or status.currentRun names this pod.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder pod",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Pod string `json:"pod"`

	// slots is how many slots of the lock the run holds, 1 when absent (its group's
	// spec.lockOptions).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder slots",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Slots int32 `json:"slots,omitempty"`

	// mode Exclusive says that the run holds the lock alone (its group's spec.lockOptions): no
	// other run is granted a slot while it holds it; absent, it holds it Shared.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder mode",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Mode LockMode `json:"mode,omitempty"`

	// since is when the run took the slot.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holding since",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Since metav1.Time `json:"since"`
}

// OaatLockStatus is who holds the lock and how many wait for it.
type OaatLockStatus struct {
	// holders are the runs that hold a slot of the lock, and the requests it granted whose pod
	// is about to start (status.lockWait of their group), at most the capacity in force of them but
	// for runs that held it before a cut (spec.capacitySchedule). The
	// lock's reconciler alone writes them.
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
	// status.lockWait is set): a waiting group has a place in the queue of every lock it names,
	// so that a group needing two locks is not starved by groups needing one.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting groups",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	WaitingGroups int32 `json:"waitingGroups,omitempty"`

	// circuitBreaker is the state of the circuit breaker the lock carries for the groups naming
	// it (spec.circuitBreaker: Shared), written by the lock's reconciler from the breakers of those
	// groups: present once a group's breaker has opened it, removed when the lock no longer
	// carries a breaker.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Circuit breaker",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	CircuitBreaker *LockCircuitBreakerStatus `json:"circuitBreaker,omitempty"`

	// CapacityStatus is the capacity in force and its next change (spec.capacitySchedule).
	CapacityStatus `json:",inline"`

	// AdaptiveStatus is the capacity in use with spec.adaptive, and its last change.
	AdaptiveStatus `json:",inline"`

	// QueueStatus is what the lock keeps of its queue: the requests it passed over for priority.
	QueueStatus `json:",inline"`
}

// OaatLock is a semaphore shared by OaatGroups of its namespace: at most spec.capacity item pods
// of all the groups that name it in spec.locks are live at any instant. A group takes all of its
// locks or none before it starts a run, and when a slot frees, the group that has waited longest
// gets it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=olock,categories=oaat
// +kubebuilder:printcolumn:name="Capacity",type=integer,JSONPath=`.spec.capacity`
// +kubebuilder:printcolumn:name="In force",type=integer,JSONPath=`.status.capacityInForce`
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

// LockWait is the group's request for the locks it names: it has an item ready to start, whose
// pod starts once every lock lists the request's pod among its holders. Each lock's reconciler
// alone writes the lock's holders; a group only writes its request here.
type LockWait struct {
	// since is when the group began to wait: its place in the queue of every lock it names
	// (the earlier since, then the smaller namespace/name, is served first).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting since",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Since metav1.Time `json:"since"`

	// locks are the locks that do not list the request yet: full, or promised to a group that
	// has waited longer. An OaatLock is named by its name, a ClusterOaatLock as
	// ClusterOaatLock/name.
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=269
	// +listType=set
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting for locks",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Locks []string `json:"locks"`

	// item is the item the request is for. While it waits, the group keeps asking for the same
	// item as long as it may start; an OaatRun arriving, or the item ceasing to be ready, changes
	// the request's item and pod, and each lock moves its grant to the new pod, the group keeping
	// its place. Absent in a request written by 0.2.0, which no lock grants: the group writes it
	// again.
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Requested item",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Item string `json:"item,omitempty"`

	// pod is the name of the pod the run of item will have: each lock grants the request by
	// listing this pod among its holders.
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Requested pod",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Pod string `json:"pod,omitempty"`

	// yielded are the locks whose grant the group gives back before its run starts, so that a
	// group that has waited longer gets the slot: a group holding the grant of one lock while it
	// waits for another yields it to an earlier waiter of that lock, which no group holding
	// grants then keeps from starting (docs/locks.md). The lock drops the grant once it sees the
	// request yield it, and the group asks for it again once the lock no longer lists it.
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=269
	// +listType=set
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Yielded locks",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Yielded []string `json:"yielded,omitempty"`

	// priority is the group's priority as its locks honour it: its spec.priority, at most the
	// smallest spec.maxPriority of the locks it names; 0 when absent. Each lock serves the
	// requests of higher priority first, then in the order of since.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Priority honoured",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// promotedAt is when the group found that a lock passed the request over PassLimit (3)
	// times for requests of higher priority that began to wait later (its status.passedOver):
	// every lock it names serves a promoted request before the requests not promoted, whatever
	// their priority, until it is granted. Absent for a request not promoted.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Promoted at",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	PromotedAt *metav1.Time `json:"promotedAt,omitempty"`
}

func init() {
	SchemeBuilder.Register(&OaatLock{}, &OaatLockList{})
}
