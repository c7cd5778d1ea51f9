//go:build tools

// Package krew pins krew, kubectl's plugin manager, with which the release's plugin archives and
// krew manifest are installed as a user installs them offline (kubectl krew install --manifest
// --archive). The Makefile builds it into the tools cache with its version in the file name.
package krew

import (
	_ "sigs.k8s.io/krew/cmd/krew"
)
