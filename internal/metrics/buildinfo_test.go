package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/oaat-io/oaat-operator/internal/version"
)

func TestBuildInfo(t *testing.T) {
	t.Parallel()
	want := `
# HELP oaat_build_info Always 1; its labels are the operator's build: version (the release), revision (the commit it was built from) and goversion (the Go toolchain). A plain go build has version and revision unknown.
# TYPE oaat_build_info gauge
oaat_build_info{goversion="go1.26.0",revision="0123abc",version="0.3.0"} 1
`
	g := newBuildInfo(version.Info{Version: "0.3.0", Revision: "0123abc", GoVersion: "go1.26.0"})
	if err := testutil.CollectAndCompare(g, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// Register registers the running build's oaat_build_info with the run metrics.
func TestRegisterBuildInfo(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	status := NewStatusCollector(nil, nil)
	if err := Register(reg, NewRunMetrics(), status); err != nil {
		t.Fatal(err)
	}
	reg.Unregister(status) // it would read the groups of a cache this test has not
	info := version.Get()
	want := `
# HELP oaat_build_info Always 1; its labels are the operator's build: version (the release), revision (the commit it was built from) and goversion (the Go toolchain). A plain go build has version and revision unknown.
# TYPE oaat_build_info gauge
oaat_build_info{goversion="` + info.GoVersion + `",revision="` + info.Revision + `",version="` + info.Version + `"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "oaat_build_info"); err != nil {
		t.Fatal(err)
	}
}
