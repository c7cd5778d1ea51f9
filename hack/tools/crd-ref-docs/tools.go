//go:build tools

// Package crdrefdocs pins crd-ref-docs, which writes the API reference (docs/reference/api.md)
// from the Go types of api/v1alpha1: every field with its godoc, type, default and validation
// markers. The Makefile builds it into the tools cache with its version in the file name.
package crdrefdocs

import (
	_ "github.com/elastic/crd-ref-docs"
)
