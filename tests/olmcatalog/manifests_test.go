//go:build olmcatalog

package olmcatalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOLMManifests checks olmManifests on the quickstart olm.yaml of the pinned OLM (no cluster:
// `go test -tags olmcatalog -run TestOLMManifests`, with OLM_DEPLOY_DIR set): both operators
// run OLM's image by the release's tag, the catalog operator's util image too, and the two
// objects this cluster cannot serve are gone while everything else stays.
func TestOLMManifests(t *testing.T) {
	dir := os.Getenv("OLM_DEPLOY_DIR")
	if dir == "" {
		t.Fatal("OLM_DEPLOY_DIR is not set: run it through make test-olm-catalog")
	}
	in, err := os.ReadFile(filepath.Join(dir, "upstream", "quickstart", "olm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const img = "quay.io/operator-framework/olm:v0.33.0"
	out, err := olmManifests(in, img)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	// olm-operator's image, catalog-operator's image and its -util-image.
	if n := strings.Count(got, img); n != 3 {
		t.Errorf("OLM's image named %d times, want 3:\n%s", n, got)
	}
	for _, gone := range []string{"name: packageserver\n", "operatorhubio-catalog", "@sha256:"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q is still in the manifests", gone)
		}
	}
	for _, flag := range []string{"- '--namespace'", "- --configmapServerImage=", "- --util-image", "- --writeStatusName"} {
		if !strings.Contains(got, flag) {
			t.Errorf("the flag %q is missing from the manifests", flag)
		}
	}
	if m := singleDashFlag.FindString(got); m != "" {
		t.Errorf("a long flag with a single dash is left: %q", m)
	}
	for _, kept := range []string{"name: olm-operator\n", "name: catalog-operator\n", "name: olm-operator-serviceaccount",
		"name: global-operators", "name: olm-operators", "kind: ClusterRoleBinding"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q is missing from the manifests", kept)
		}
	}
	if _, err := olmManifests([]byte("kind: Namespace\nmetadata: {name: olm}\n"), img); err == nil {
		t.Error("manifests without OLM's image by digest were accepted")
	}
}
