package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KindClusterOaatLock is the kind of the cluster-scoped lock; a group's status.lockWait names a
// ClusterOaatLock as KindClusterOaatLock + "/" + name, an OaatLock by its name alone.
const KindClusterOaatLock = "ClusterOaatLock"

// ClusterOaatLockSpec says how many item pods of the groups naming the lock may be live at once,
// and the groups of which namespaces may name it.
// +kubebuilder:validation:XValidation:rule="!has(self.namespaceSelector) || !has(self.namespaceSelector.matchExpressions) || self.namespaceSelector.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="namespaceSelector.matchExpressions: operator must be one of In, NotIn, Exists, DoesNotExist"
// +kubebuilder:validation:XValidation:rule="!has(self.namespaceSelector) || !has(self.namespaceSelector.matchExpressions) || self.namespaceSelector.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) == (has(e.values) && size(e.values) > 0))",message="namespaceSelector.matchExpressions: In and NotIn need values, Exists and DoesNotExist take none"
type ClusterOaatLockSpec struct {
	// capacity is the most item pods of all the groups naming the lock (spec.clusterLocks), in
	// every namespace, that may be live at any instant; 1 makes the groups run one at a time among
	// themselves.
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

	// namespaceSelector selects, by their labels, the namespaces whose groups may name the lock.
	// As for any Kubernetes label selector, an empty selector ({}) selects every namespace and an
	// absent one selects none: a lock that nobody was given leave to use is safe, and a cluster
	// admin grants it on purpose. A group in a namespace not selected is not Ready (reason
	// LockNotPermitted) and runs nothing; it recovers as soon as its namespace's labels match.
	// Whoever may label namespaces decides who may use the lock, so keep that right with the
	// cluster admins (docs/security.md).
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Namespace selector",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:selector:core:v1:Namespace"}
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// circuitBreaker Shared makes the lock carry the circuit breaker of the groups naming it
	// (spec.clusterLocks of any namespace), for a lock that stands for a target they all need: when the breaker of one of
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

// ClusterOaatLockStatus is who holds the lock and how many wait for it.
// +kubebuilder:validation:XValidation:rule="!has(self.holders) || self.holders.all(h, has(h.__namespace__))",message="holders: every holder of a ClusterOaatLock names its group's namespace"
type ClusterOaatLockStatus struct {
	// holders are the runs that hold a slot of the lock, and the requests it granted whose pod
	// is about to start (status.lockWait of their group), at most the capacity in force of them but
	// for runs that held it before a cut (spec.capacitySchedule), each
	// with its group's namespace; a group holds at most one slot. The lock's reconciler alone
	// writes them.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holders",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Holders []LockHolder `json:"holders,omitempty"`

	// holderCount is the number of holders, for display.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Holder count",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	HolderCount int32 `json:"holderCount,omitempty"`

	// waitingGroups is the number of groups, in all namespaces, naming the lock that wait for
	// locks (their status.lockWait is set) and are not being deleted. Only an installation of the
	// operator that watches all namespaces writes it: one limited to some namespaces cannot count
	// the others' groups, and leaves it as it is.
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

	// installationClaims (a name kept from 0.2.0) are the waiting of the installations of the
	// operator that watch only some namespaces and have groups waiting for the lock, one entry per
	// installation. Such installations cannot read each other's groups: through these entries a
	// freed slot goes to the group that has waited longest, whichever installation runs it. Each
	// installation's lock reconciler writes only its own entry, and the holders of its own groups.
	// +listType=map
	// +listMapKey=installation
	// +kubebuilder:validation:MaxItems=64
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Installations waiting",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	InstallationsWaiting []InstallationWaiting `json:"installationClaims,omitempty"`

	// CapacityStatus is the capacity in force and its next change (spec.capacitySchedule).
	CapacityStatus `json:",inline"`

	// AdaptiveStatus is the capacity in use with spec.adaptive, and its last change.
	AdaptiveStatus `json:",inline"`

	// QueueStatus is what the lock keeps of its queue: the requests it passed over for priority.
	QueueStatus `json:",inline"`
}

// InstallationWaiting is what an installation of the operator that watches only some namespaces
// says of its groups waiting for a ClusterOaatLock: how many wait, and since when the longest has
// waited.
type InstallationWaiting struct {
	// installation names the installation: the first, in alphabetical order, of the namespaces
	// it watches (installations sharing a lock watch different namespaces).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Installation",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Installation string `json:"installation"`

	// waiting is how many of the installation's groups naming the lock wait for locks.
	// +kubebuilder:validation:Minimum=1
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting groups",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Waiting int32 `json:"waiting"`

	// since is when the longest-waiting of those groups began to wait: the entry's place among
	// the waiters of every installation.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting since",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Since metav1.Time `json:"since"`

	// renewedAt is when the installation last wrote the entry. It is renewed every minute while
	// its groups wait; an entry not renewed for two minutes (its installation was removed or is
	// stopped) counts no more and is removed by the next installation that writes its own.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Renewed at",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	RenewedAt metav1.Time `json:"renewedAt"`
}

// ClusterOaatLock is a semaphore shared by OaatGroups of several namespaces: at most
// spec.capacity item pods of all the groups that name it in spec.clusterLocks are live at any
// instant. It works as an OaatLock does (all locks or none, fairness, crash safety); only the
// groups of the namespaces that spec.namespaceSelector selects may use it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=coalock,categories=oaat
// +kubebuilder:printcolumn:name="Capacity",type=integer,JSONPath=`.spec.capacity`
// +kubebuilder:printcolumn:name="In force",type=integer,JSONPath=`.status.capacityInForce`
// +kubebuilder:printcolumn:name="Holders",type=integer,JSONPath=`.status.holderCount`
// +kubebuilder:printcolumn:name="Waiting",type=integer,JSONPath=`.status.waitingGroups`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Cluster Oaat Lock",resources={{OaatGroup,v1alpha1}}
type ClusterOaatLock struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the lock's capacity and the namespaces that may use it; absent means capacity 1
	// and no namespace.
	// +optional
	Spec ClusterOaatLockSpec `json:"spec,omitempty"`

	// status lists the lock's holders.
	// +optional
	Status ClusterOaatLockStatus `json:"status,omitempty"`
}

// ClusterOaatLockList is a list of ClusterOaatLocks.
// +kubebuilder:object:root=true
type ClusterOaatLockList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items is the list of ClusterOaatLocks.
	Items []ClusterOaatLock `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterOaatLock{}, &ClusterOaatLockList{})
}
