//go:build tools

// Package cyclonedxgomod pins cyclonedx-gomod, which writes the SBOMs of `make release` (the
// manager's and the kubectl-oaat plugin's, from the shipped binaries: `cyclonedx-gomod bin`).
// The Makefile builds it into the tools cache with its version in the file name.
package cyclonedxgomod

import (
	_ "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"
)
