//go:build tools

// Package controlplanefloor pins the kube-apiserver of the oldest Kubernetes that the bundle's
// CSV claims (spec.minKubeVersion): the admission tests run the CRDs' rules on it too, so that a
// rule the newest API server accepts but the oldest refuses (a CEL function it lacks, a cost it
// estimates higher) fails the tests. It is built with `go build`, never imported.
package controlplanefloor

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
