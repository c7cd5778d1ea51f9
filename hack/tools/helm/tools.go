//go:build tools

// Package helm pins Helm, with which the release's chart is linted, rendered, installed, upgraded
// and uninstalled as a user does (tests/release, tests/realnode). The Makefile builds it into the
// tools cache with its version in the file name.
package helm

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
