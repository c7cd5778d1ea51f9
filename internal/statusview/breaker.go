package statusview

import (
	"fmt"
	"strings"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Breaker says what the group's circuit breaker (spec.circuitBreaker, or that of a lock it names
// that carries one) is doing, empty for a group without one: closed with the items that failed in
// a row so far, or open since when, for which failures (or, for a group that follows a lock's
// breaker, by the lock), with its failed probes and when the next probe may start.
func Breaker(g *v1alpha1.OaatGroup, now time.Time) string {
	cb := g.Status.CircuitBreaker
	if cb == nil {
		return ""
	}
	threshold := int32(v1alpha1.DefaultConsecutiveItemFailures)
	if spec := g.Spec.CircuitBreaker; spec != nil && spec.ConsecutiveItemFailures > 0 {
		threshold = spec.ConsecutiveItemFailures
	}
	if cb.State != v1alpha1.BreakerOpen {
		return fmt.Sprintf("closed, %d of %d items failed in a row", len(cb.FailedItems), threshold)
	}
	quoted := make([]string, len(cb.FailedItems))
	for i, item := range cb.FailedItems {
		quoted[i] = Item(item)
	}
	failure := Item(cb.LastFailureReason)
	if cb.LastFailureExitCode != nil {
		failure += fmt.Sprintf(" (exit %d)", *cb.LastFailureExitCode)
	}
	why := fmt.Sprintf("after %d items failed in a row (%s)", len(cb.FailedItems), strings.Join(quoted, ", "))
	if len(cb.FailedItems) == 0 {
		why = "with the breaker of a lock it names"
	}
	s := fmt.Sprintf("OPEN %s ago %s, last failure %s; failed probes: %d", opened(cb, now), why, failure, cb.FailedProbes)
	switch cr := g.Status.CurrentRun; {
	case cr != nil:
		return s + "; probe running: " + Item(cr.Item)
	case cb.NextProbeAt != nil && cb.NextProbeAt.After(now):
		return s + "; next probe in " + age(now, cb.NextProbeAt.Time)
	}
	return s + "; next probe when an item is eligible"
}

func opened(cb *v1alpha1.CircuitBreakerStatus, now time.Time) string {
	if cb.OpenedAt == nil {
		return "unknown"
	}
	return age(cb.OpenedAt.Time, now)
}
