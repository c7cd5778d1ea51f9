package support

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The flags the tests' builds pass are make's VERSION_LDFLAGS: the same variables of the same
// package, the Makefile's VERSION.
func TestVersionLDFlagsAreMakes(t *testing.T) {
	t.Parallel()
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-X " + versionPackage + ".version=$(VERSION)", "-X " + versionPackage + ".revision=$(REVISION)"} {
		if !strings.Contains(string(makefile), want) {
			t.Errorf("the Makefile's VERSION_LDFLAGS lack %q", want)
		}
	}
	v, err := MakefileVersion("../..")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("the Makefile's VERSION is %q, not X.Y.Z", v)
	}
	flags, err := VersionLDFlags("../..")
	if err != nil {
		t.Fatal(err)
	}
	if want := "-X " + versionPackage + ".version=" + v + " "; !strings.HasPrefix(flags, want) {
		t.Errorf("VersionLDFlags = %q, want it to start with %q", flags, want)
	}
}
