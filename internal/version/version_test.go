package version

import (
	"runtime"
	"testing"
)

// A plain go build, as `go test` is, records neither version nor revision: Get says so.
func TestGetWithoutLinkerFlags(t *testing.T) {
	t.Parallel()
	want := Info{Version: Unknown, Revision: Unknown, GoVersion: runtime.Version()}
	if got := Get(); got != want {
		t.Errorf("Get() = %+v, want %+v", got, want)
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	got := Info{Version: "0.3.0", Revision: "0123abc", GoVersion: "go1.26.0"}.String()
	if want := "0.3.0 (revision 0123abc, go1.26.0)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
