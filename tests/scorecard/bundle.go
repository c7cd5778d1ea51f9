package main

import (
	"fmt"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// bundle is what the tests read from a bundle directory: its CSV and its CRDs.
type bundle struct {
	csv  *operatorsv1alpha1.ClusterServiceVersion
	crds []*apiextensionsv1.CustomResourceDefinition
}

func loadBundle(dir string) (*bundle, error) {
	b, err := apimanifests.GetBundleFromDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the bundle in %s: %w", dir, err)
	}
	if b.CSV == nil {
		return nil, fmt.Errorf("the bundle in %s has no ClusterServiceVersion", dir)
	}
	return &bundle{csv: b.CSV, crds: b.V1CRDs}, nil
}

// crdVersion returns the CRD of group and kind and its version named version, or nil.
func (b *bundle) crdVersion(group, kind, version string) (*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.CustomResourceDefinitionVersion) {
	for _, crd := range b.crds {
		if crd.Spec.Group != group || crd.Spec.Names.Kind != kind {
			continue
		}
		for i := range crd.Spec.Versions {
			if crd.Spec.Versions[i].Name == version {
				return crd, &crd.Spec.Versions[i]
			}
		}
		return crd, nil
	}
	return nil, nil
}
