package version

import "testing"

func TestMinor(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{"0.3.1": "0.3", "v1.2.3-rc.1": "1.2", "1.2": "1.2", Unknown: "", "": ""} {
		got, ok := Minor(v)
		if got != want || ok != (want != "") {
			t.Errorf("Minor(%q) = %q, %v; want %q", v, got, ok, want)
		}
	}
}
