//go:build tools

// Package controlplanefloor pins the control plane of the oldest Kubernetes that the bundle's CSV
// claims (spec.minKubeVersion). The admission tests run the CRDs' rules on its kube-apiserver
// too, so that a rule the newest API server accepts but the oldest refuses (a CEL function it
// lacks, a cost it estimates higher) fails the tests; the floor suite (make test-floor) runs a
// core of the end-to-end specs on a cluster of its kube-apiserver, kube-controller-manager and
// kube-scheduler, with kwok's nodes. It is built with `go build`, never imported.
package controlplanefloor

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
