// Package version is the identity of a build: the release version and the commit it was built
// from, which the linker sets (make's VERSION_LDFLAGS, in every build the project ships), and the
// Go toolchain that built it.
package version

import (
	"fmt"
	"runtime"
)

// Set by the linker: -X github.com/oaat-io/oaat-operator/internal/version.version=0.3.0 and
// -X github.com/oaat-io/oaat-operator/internal/version.revision=<commit>. A plain go build leaves
// them empty, and Get says so.
var (
	version  string
	revision string
)

// Unknown is what Get reports for a part the build did not record (a plain go build).
const Unknown = "unknown"

// Info is the identity of a build.
type Info struct {
	// Version is the release version without a leading v, e.g. 0.3.0.
	Version string `json:"version"`
	// Revision is the commit the build was made from.
	Revision string `json:"revision"`
	// GoVersion is the Go toolchain that built it, e.g. go1.26.0.
	GoVersion string `json:"goVersion"`
}

// Get returns the identity of the running build.
func Get() Info {
	return Info{Version: orUnknown(version), Revision: orUnknown(revision), GoVersion: runtime.Version()}
}

// String is the build's identity on one line, as `manager --version` and `kubectl oaat version`
// print it: 0.3.0 (revision 0123abc..., go1.26.0).
func (i Info) String() string {
	return fmt.Sprintf("%s (revision %s, %s)", i.Version, i.Revision, i.GoVersion)
}

func orUnknown(s string) string {
	if s == "" {
		return Unknown
	}
	return s
}
