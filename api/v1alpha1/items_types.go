package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ItemsSource is a source of items beyond spec.oaatItems: exactly one of its members is set, the
// others are nil.
// +kubebuilder:validation:ExactlyOneOf=configMap;persistentVolumeClaims
type ItemsSource struct {
	// configMap takes items from a ConfigMap in the group's namespace. The ConfigMap must carry
	// the label oaat.io/item-source: "true"; any other is refused (ItemsValid False) and not read.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="ConfigMap",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:oaatItemsFrom"}
	// +optional
	ConfigMap *ConfigMapItems `json:"configMap,omitempty"`

	// persistentVolumeClaims takes as items the names of the PersistentVolumeClaims of the
	// group's namespace that its selector matches, in the order of their names. A claim being
	// deleted is not an item. Claims are watched: one created, labelled or unlabelled changes the
	// group's items within seconds. A pod template mounts the item's claim with
	// volumes[].persistentVolumeClaim.claimName: "{{oaat_item}}".
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="PersistentVolumeClaims",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:oaatItemsFrom"}
	// +optional
	PersistentVolumeClaims *PersistentVolumeClaimItems `json:"persistentVolumeClaims,omitempty"`
}

// ConfigMapItems names a ConfigMap whose keys, or the lines of one of whose keys, are items. Only
// a ConfigMap labelled oaat.io/item-source: "true" (LabelItemSource) is a source.
type ConfigMapItems struct {
	// name is the ConfigMap's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="ConfigMap name",xDescriptors={"urn:alm:descriptor:io.kubernetes:ConfigMap"}
	// +required
	Name string `json:"name"`

	// key names one key of the ConfigMap's data: each non-empty line of its value is then an
	// item (leading and trailing blanks removed; lines starting with # are comments). Absent,
	// each key of the ConfigMap's data is an item.
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Key",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Key string `json:"key,omitempty"`
}

// PersistentVolumeClaimItems chooses PersistentVolumeClaims of the group's namespace by their
// labels; each claim chosen is an item named after it.
type PersistentVolumeClaimItems struct {
	// selector chooses the claims by their labels. An empty selector ({}) chooses every claim
	// of the namespace; a selector the operator cannot parse chooses none and is named in the
	// ItemsValid condition.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Claim selector",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:selector:core:v1:PersistentVolumeClaim"}
	// +required
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}
