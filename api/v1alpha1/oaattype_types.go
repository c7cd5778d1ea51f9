package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OaatTypeKind names the mechanism that runs an item.
// +kubebuilder:validation:Enum=Pod
type OaatTypeKind string

// OaatTypePod runs each item as a Pod built from the OaatType's template.
const OaatTypePod OaatTypeKind = "Pod"

// OaatTypeSpec defines what running an item means.
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec.restartPolicy) || self.template.spec.restartPolicy == 'Never'",message="spec.template.spec.restartPolicy must be Never or unset: an item run ends when its pod ends"
type OaatTypeSpec struct {
	// type is the mechanism that runs an item. Only Pod is supported: each run of an item is one
	// Pod built from template.
	// +kubebuilder:default=Pod
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Type",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Pod"}
	// +optional
	Type OaatTypeKind `json:"type,omitempty"`

	// template is the pod template of an item run. Its labels and annotations are copied to the pod;
	// every container and init container gets the environment variable OAAT_ITEM, and the strings
	// {{oaat_item}} and %%oaat_item%% in command, args and env values are replaced by the item.
	// The item is data: use the placeholder only as a whole command or args element or in an env
	// value, and in a shell read the item as "$OAAT_ITEM" (quoted), never with the placeholder
	// inside a script (sh -c "... {{oaat_item}}" runs an item such as $(id)). Who may create an
	// OaatType may run pods with any ServiceAccount of the namespace.
	// restartPolicy must be Never or unset (it is set to Never).
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod template",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	// +required
	Template corev1.PodTemplateSpec `json:"template"`
}

// OaatTypeStatus is the observed state of an OaatType. It is empty for now: an OaatType is
// read by the groups that use it.
type OaatTypeStatus struct{}

// OaatType defines what running an item of an OaatGroup means: a pod template in which the item
// name is substituted.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ot,categories=oaat
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Oaat Type",resources={{Pod,v1}}
type OaatType struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines what running an item means.
	// +required
	Spec OaatTypeSpec `json:"spec"`

	// status is the observed state of the OaatType.
	// +optional
	Status OaatTypeStatus `json:"status,omitempty"`
}

// OaatTypeList is a list of OaatTypes.
// +kubebuilder:object:root=true
type OaatTypeList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items is the list of OaatTypes.
	Items []OaatType `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OaatType{}, &OaatTypeList{})
}
