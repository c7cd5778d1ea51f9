//go:build tools

// Package olm pins the Operator Lifecycle Manager: its two operators, olm and catalog, which run
// outside the local cluster (tests/olminstall) or inside it from the OLM image (tests/olmcatalog),
// and the utilities that image carries: cpb, which the bundle unpack Job copies into the bundle's
// container, and copy-content, which extracts a catalog image's content. Its go.mod carries
// operator-lifecycle-manager's own replace lines. The Makefile builds each into bin/ with its
// version in the file name.
package olm

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/copy-content"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
	_ "github.com/operator-framework/operator-lifecycle-manager/util/cpb"
)
