package version

import utilversion "k8s.io/apimachinery/pkg/util/version"

// MinorSkew says whether the versions a and b differ in their major or minor number, as a
// client and a server that may not understand each other do; patch releases of one minor
// version differ only in fixes. ok is false when either is not a version (Unknown, from a plain
// go build): then nothing can be said.
func MinorSkew(a, b string) (skewed, ok bool) {
	va, errA := utilversion.ParseGeneric(a)
	vb, errB := utilversion.ParseGeneric(b)
	if errA != nil || errB != nil {
		return false, false
	}
	return va.Major() != vb.Major() || va.Minor() != vb.Minor(), true
}
