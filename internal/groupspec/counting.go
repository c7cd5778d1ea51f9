package groupspec

import (
	"slices"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// FailureCounting decides which failures of a group count towards opening its circuit breaker,
// and so, for a lock with spec.adaptive, which failures are the target's (the item's own do not
// throttle it).
type FailureCounting struct {
	// ExitCodes and Reasons are spec.circuitBreaker's: with neither, every failure counts.
	ExitCodes []int32
	Reasons   []string
	// DoNotRetry is spec.exitCodes.doNotRetry: a failure with one of these codes never counts.
	DoNotRetry []int32
}

// CountingOf is the group's FailureCounting; a group without spec.circuitBreaker counts every
// failure, as the breaker's defaults do.
func CountingOf(spec *v1alpha1.OaatGroupSpec) FailureCounting {
	var c FailureCounting
	if cb := spec.CircuitBreaker; cb != nil {
		c.ExitCodes, c.Reasons = cb.ExitCodes, cb.Reasons
	}
	if spec.ExitCodes != nil {
		c.DoNotRetry = spec.ExitCodes.DoNotRetry
	}
	return c
}

// Counts reports whether a failure with exitCode (nil when none) and reason counts: never one
// whose exit code DoNotRetry lists, which says the item itself cannot succeed; any other without
// ExitCodes and Reasons; else one whose exit code or reason they list.
func (c FailureCounting) Counts(exitCode *int32, reason string) bool {
	switch {
	case exitCode != nil && slices.Contains(c.DoNotRetry, *exitCode):
		return false
	case len(c.ExitCodes) == 0 && len(c.Reasons) == 0:
		return true
	case exitCode != nil && slices.Contains(c.ExitCodes, *exitCode):
		return true
	}
	return slices.Contains(c.Reasons, reason)
}
