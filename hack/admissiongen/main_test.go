package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

const generated = "../../api/v1alpha1/zz_generated.admission.go"

// TestGeneratedIsCurrent fails when the committed rules are not what the toolchain running the
// test writes: the zones of its lib/time/zoneinfo.zip differ from the list (a Go upgrade brought
// new tzdata), or the generator changed. `make generate` writes them again.
func TestGeneratedIsCurrent(t *testing.T) {
	zones := toolchainZones(t)
	want, err := render(zones, goMinor(runtime.Version()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale for %s (tzdata %s, %d zones; it records Go %s, tzdata %s): run `make generate`",
			generated, runtime.Version(), zones.release, len(zones.names), v1alpha1.TimeZonesGoVersion, v1alpha1.TimeZonesRelease)
	}
}

// TestGoLineMatches ties the zone list to go.mod: the module's go line names the Go release whose
// tzdata the manager embeds, and the list must be that release's. A go line moved to a new
// release fails here until the list is generated with it.
func TestGoLineMatches(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if line == nil {
		t.Fatal("go.mod has no go line")
	}
	if toolchain := regexp.MustCompile(`(?m)^toolchain (\S+)$`).FindSubmatch(mod); toolchain != nil {
		line[1] = toolchain[1]
	}
	if got := goMinor(string(line[1])); got != v1alpha1.TimeZonesGoVersion {
		t.Errorf("go.mod names Go %s, the zone list was generated with Go %s: run `make generate` with Go %s", got, v1alpha1.TimeZonesGoVersion, got)
	}
	if got := goMinor(runtime.Version()); got != v1alpha1.TimeZonesGoVersion {
		t.Errorf("the test runs with %s, the zone list was generated with Go %s", runtime.Version(), v1alpha1.TimeZonesGoVersion)
	}
}

// TestZonePattern checks the zone pattern against the list it is made of, with Go's RE2 (the
// engine of CEL's matches): every zone matches, and a zone with a character more or less, or a
// prefix of a nested zone, does not.
func TestZonePattern(t *testing.T) {
	zones := toolchainZones(t)
	re := regexp.MustCompile(zonePattern(zones.names))
	known := map[string]bool{}
	for _, z := range zones.names {
		known[z] = true
	}
	for _, z := range zones.names {
		if !re.MatchString(z) {
			t.Errorf("zone %q does not match", z)
		}
		for _, near := range []string{z + "x", z[:len(z)-1], z + "/", "x" + z, filepath.Dir(z)} {
			if !known[near] && re.MatchString(near) {
				t.Errorf("%q, not a zone, matches", near)
			}
		}
	}
	t.Logf("%d zones of %s (tzdata %s): pattern of %d characters", len(zones.names), runtime.Version(), zones.release, len(zonePattern(zones.names)))
}

func TestGoMinor(t *testing.T) {
	for in, want := range map[string]string{"go1.26.8": "1.26", "1.26.0": "1.26", "go1.27rc1": "1.27", "1.26": "1.26"} {
		if got := goMinor(in); got != want {
			t.Errorf("goMinor(%q) = %q, want %q", in, got, want)
		}
	}
}

// toolchainZones are the zones of the Go toolchain on the PATH.
func toolchainZones(t *testing.T) zoneSource {
	t.Helper()
	root, err := goroot()
	if err != nil {
		t.Fatal(err)
	}
	zones, err := readZones(root)
	if err != nil {
		t.Fatal(err)
	}
	return zones
}
