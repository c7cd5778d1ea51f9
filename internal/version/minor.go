package version

import (
	"fmt"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// Minor is the version v up to its minor number (0.3.1 and v0.3.0-rc.1 are 0.3), what a client
// and a server must share to understand each other (patch releases differ only in fixes); ok is
// false when v is not a version (Unknown, from a plain go build).
func Minor(v string) (minor string, ok bool) {
	parsed, err := utilversion.ParseGeneric(v)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%d.%d", parsed.Major(), parsed.Minor()), true
}
