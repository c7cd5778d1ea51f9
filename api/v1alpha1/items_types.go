package v1alpha1

// ItemsSource is a source of items beyond spec.oaatItems.
type ItemsSource struct {
	// configMap takes items from a ConfigMap in the group's namespace. The ConfigMap must carry
	// the label oaat.io/item-source: "true"; any other is refused (ItemsValid False) and not read.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="ConfigMap",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:oaatItemsFrom"}
	// +required
	ConfigMap ConfigMapItems `json:"configMap"`
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
