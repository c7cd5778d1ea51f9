//go:build tools

// Package golangcilint pins golangci-lint and the Kube API Linter. The Makefile builds two programs
// from this module into bin/, each with its version in the file name: golangci-lint itself (make
// lint, .golangci.yml) and the Kube API Linter's own command, which is this same golangci-lint with
// the Kube API Linter compiled in as a module plugin (make lint-api, .golangci-kal.yml). Building
// that command here is what `golangci-lint custom` would do, without the git checkout it needs.
package golangcilint

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
	_ "sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter"
)
