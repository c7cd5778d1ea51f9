//go:build tools

// Package devtools pins the code generators and build tools of the project (controller-gen,
// kustomize). The Makefile builds each into bin/ with its version in the file name.
package devtools

import (
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
	_ "sigs.k8s.io/kustomize/kustomize/v5"
)
