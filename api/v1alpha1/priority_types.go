package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PassLimit is how many times a lock may pass over a request for the higher priority of requests
// that began to wait after it: once passed over that many times, the request is promoted and
// served before every request not promoted, in the order of waiting.
const PassLimit = 3

// PassedOver is a request that a lock served after requests that began to wait later, for their
// higher priority (spec.priority of their group).
type PassedOver struct {
	// namespace is the request's group's namespace, for a ClusterOaatLock; absent for an
	// OaatLock, whose groups are of its own namespace.
	// +kubebuilder:validation:MaxLength=63
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Namespace",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// group is the name of the group whose request was passed over.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Group",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Group string `json:"group"`

	// since is when the request began to wait (its status.lockWait.since): the entry counts for
	// that request only.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting since",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Since metav1.Time `json:"since"`

	// count is how many requests that began to wait later the lock granted before it. At
	// PassLimit (3) the request is promoted: no request not promoted is granted before it.
	// +kubebuilder:validation:Minimum=1
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Times passed over",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Count int32 `json:"count"`
}

// QueueStatus is what a lock's reconciler keeps of its queue beyond the requests: which waiting
// requests it passed over for priority, and how often.
type QueueStatus struct {
	// passedOver are the waiting requests the lock passed over for the higher priority of
	// requests that began to wait later, with how many times. The lock's reconciler alone writes
	// them, and drops an entry once its request is granted or withdrawn. While 1000 requests
	// are listed (a review that would list more lists the 1000 nearest to being served), the
	// lock serves its queue in the order of waiting alone, passing none over.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Passed over",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	PassedOver []PassedOver `json:"passedOver,omitempty"`
}
