//go:build tools

// Package opm pins opm, which renders, validates and serves the file-based catalog. The Makefile
// builds it into bin/ with its version in the file name.
package opm

import _ "github.com/operator-framework/operator-registry/cmd/opm"
