//go:build longexpectations

package controllers

import "time"

// The bounds of the expectations in a test build (go test -tags longexpectations): an hour each,
// so that no expectation is dropped in a test's time and the pod events alone satisfy them.
const (
	createBound  = time.Hour
	untrackBound = time.Hour
)
