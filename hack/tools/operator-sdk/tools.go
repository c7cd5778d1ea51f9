//go:build tools

// Package operatorsdk pins operator-sdk (bundle generation and validation, scorecard) and the
// scorecard test runner of its scorecard-test image, which runs the built-in basic and olm tests
// against a bundle mounted at /bundle. The Makefile builds each into bin/ with its version in
// the file name.
package operatorsdk

import (
	_ "github.com/operator-framework/operator-sdk/cmd/operator-sdk"
	_ "github.com/operator-framework/operator-sdk/images/scorecard-test"
)
