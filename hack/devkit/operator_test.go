package devkit

import (
	"slices"
	"testing"
)

func TestCRDNames(t *testing.T) {
	manifests := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: oaatgroups.oaat.io
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: oaat-operator-controller-manager
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: oaatruns.oaat.io
`
	got, err := crdNames([]byte(manifests))
	if want := []string{"crd/oaatgroups.oaat.io", "crd/oaatruns.oaat.io"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("crdNames = %v, %v; want %v", got, err, want)
	}
	if got, err := crdNames([]byte("kind: ServiceAccount\nmetadata:\n  name: x\n")); err == nil {
		t.Errorf("crdNames without a CRD = %v, want an error", got)
	}
	if _, err := crdNames([]byte("kind: [")); err == nil {
		t.Error("crdNames of malformed YAML: no error")
	}
}
