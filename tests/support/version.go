package support

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// makefileVersionRE finds the Makefile's default VERSION.
var makefileVersionRE = regexp.MustCompile(`(?m)^VERSION \?= (\S+)$`)

// versionPackage is the package whose variables the linker sets (make's VERSION_LDFLAGS).
const versionPackage = "github.com/oaat-io/oaat-operator/internal/version"

// MakefileVersion returns the release version the Makefile at the repository's root builds
// (`VERSION ?= X.Y.Z`).
func MakefileVersion(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	m := makefileVersionRE.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s: no line VERSION ?= X.Y.Z", filepath.Join(root, "Makefile"))
	}
	return string(m[1]), nil
}

// VersionLDFlags returns what make's VERSION_LDFLAGS gives go build -ldflags for the tree at
// root: the Makefile's VERSION and the commit HEAD (none outside git, as make's REVISION), so
// that a binary a test builds itself says its version as the one make builds does.
func VersionLDFlags(root string) (string, error) {
	v, err := MakefileVersion(root)
	if err != nil {
		return "", err
	}
	revision := ""
	if out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
		revision = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("-X %s.version=%s -X %s.revision=%s", versionPackage, v, versionPackage, revision), nil
}
