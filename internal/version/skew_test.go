package version

import "testing"

func TestMinorSkew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b       string
		skewed, ok bool
	}{
		{a: "0.3.0", b: "0.3.0", ok: true},
		{a: "0.3.0", b: "0.3.7", ok: true},
		{a: "v0.3.1", b: "0.3.0", ok: true},
		{a: "0.3.0", b: "0.4.0", skewed: true, ok: true},
		{a: "1.3.0", b: "0.3.0", skewed: true, ok: true},
		{a: "0.2.9", b: "0.3.0", skewed: true, ok: true},
		{a: Unknown, b: "0.3.0"},
		{a: "0.3.0", b: Unknown},
		{a: "0.3.0", b: ""},
	} {
		skewed, ok := MinorSkew(tc.a, tc.b)
		if skewed != tc.skewed || ok != tc.ok {
			t.Errorf("MinorSkew(%q, %q) = %v, %v; want %v, %v", tc.a, tc.b, skewed, ok, tc.skewed, tc.ok)
		}
	}
}
