//go:build tools

// Package grpchealthprobe pins grpc_health_probe, which OLM's catalog pods run in their readiness
// and liveness probes (/bin/grpc_health_probe -addr=:50051): the opm image carries it. The
// version is the one github.com/operator-framework/operator-registry (hack/tools/opm) requires.
// The Makefile builds it into bin/ with its version in the file name.
package grpchealthprobe

import _ "github.com/grpc-ecosystem/grpc-health-probe"
