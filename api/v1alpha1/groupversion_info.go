// Package v1alpha1 contains the API of oaat-operator: OaatType says what running an item means,
// OaatGroup lists the items to run one at a time, OaatRun is an on-demand run of one item, and
// OaatLock is a lock shared by groups. conventions.go holds the labels, annotations, conditions
// and reasons, and the glossary of the words the API uses.
// +kubebuilder:object:generate=true
// +groupName=oaat.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the oaat-operator API.
	GroupVersion = schema.GroupVersion{Group: "oaat.io", Version: "v1alpha1"}

	// SchemeBuilder adds the API types to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
