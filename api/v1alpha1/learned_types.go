package v1alpha1

// DefaultLearnedFactor is spec.learnedRunTimeout.factor when absent.
const DefaultLearnedFactor = 3

// DefaultLearnedMin is spec.learnedRunTimeout.min when absent.
const DefaultLearnedMin Duration = "1m"

// LearnedRunTimeout bounds each run of a group by its item's own recent run durations.
// +kubebuilder:validation:XValidation:rule="(has(self.min) ? self.min : '1m').findAll('[0-9]+ *[a-z]+').map(t, int(t.find('[0-9]+')) * (t.find('[a-z]+').startsWith('w') ? 604800 : t.find('[a-z]+').startsWith('d') ? 86400 : t.find('[a-z]+').startsWith('h') ? 3600 : t.find('[a-z]+').startsWith('m') ? 60 : 1)).sum() <= self.max.findAll('[0-9]+ *[a-z]+').map(t, int(t.find('[0-9]+')) * (t.find('[a-z]+').startsWith('w') ? 604800 : t.find('[a-z]+').startsWith('d') ? 86400 : t.find('[a-z]+').startsWith('h') ? 3600 : t.find('[a-z]+').startsWith('m') ? 60 : 1)).sum()",messageExpression=`'learnedRunTimeout.min "' + (has(self.min) ? self.min : '1m') + '" is longer than max "' + self.max + '"'`
type LearnedRunTimeout struct {
	// factor multiplies the longest of the item's kept run durations into its timeout; 3 when
	// absent. At least 2: a run stopped by the timeout is kept at the timeout's length, so the
	// item's next timeout is at least twice the last, up to max.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Factor",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	Factor int32 `json:"factor,omitempty"`

	// min is the shortest learned timeout, however short the item's runs: 1m when absent.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Minimum",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Min Duration `json:"min,omitempty"`

	// max is the longest learned timeout, however long the item's runs, and the timeout of an
	// item with no kept run.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Maximum",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	Max Duration `json:"max,omitempty"`
}
