package v1alpha1

// ItemRename says that an item of the group was renamed: to takes the history of from.
// +kubebuilder:validation:XValidation:rule="self.from != self.to",message="itemRenames: from and to must differ"
type ItemRename struct {
	// from is the item's old name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Renamed from",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:itemRenames","urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	From string `json:"from,omitempty"`

	// to is the item's new name, an item of the group.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Renamed to",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:itemRenames","urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	To string `json:"to,omitempty"`
}
