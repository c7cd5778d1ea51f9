//go:build tools

// Package coredns pins CoreDNS, the local cluster's DNS when it has a real node
// (hack/cluster/services.sh): the Makefile builds it into bin/ and make images puts it into the
// image registry.k8s.io/coredns/coredns, as Kubernetes clusters run it. Never imported.
package coredns

import (
	_ "github.com/coredns/coredns"
)
