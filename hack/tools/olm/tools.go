//go:build tools

// Package olm pins the Operator Lifecycle Manager's two operators, olm and catalog, which run
// outside the local cluster to install the bundle from the catalog. Its go.mod carries
// operator-lifecycle-manager's own replace lines. The Makefile builds each into bin/ with its
// version in the file name.
package olm

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
)
