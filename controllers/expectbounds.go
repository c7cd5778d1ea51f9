//go:build !longexpectations

package controllers

import "time"

// The bounds of the expectations (memory.go), past which one that no event satisfied is dropped:
// far longer than a watch takes to bring an object (milliseconds).
const (
	// createBound bounds the wait for the pod of a new run: past it, a pass that still misses the
	// pod reads it from the API server.
	createBound = 10 * time.Second
	// untrackBound bounds the wait for a pod patched without its finalizer: past it, a pass that
	// still sees the finalizer patches again.
	untrackBound = time.Minute
)
