package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/oaat-io/oaat-operator/internal/version"
)

// newBuildInfo is the gauge oaat_build_info: always 1, its labels the build's identity, so that a
// query can join any metric with the version that produced it and tell the replicas' builds
// apart during a rollout.
func newBuildInfo(info version.Info) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "oaat_build_info",
		Help: "Always 1; its labels are the operator's build: version (the release), revision (the commit it was built from) and goversion (the Go toolchain). A plain go build has version and revision unknown.",
		ConstLabels: prometheus.Labels{
			"version":   info.Version,
			"revision":  info.Revision,
			"goversion": info.GoVersion,
		},
	})
	g.Set(1)
	return g
}
