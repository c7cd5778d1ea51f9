package statusview

import (
	"fmt"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
)

// timing says when the group's items are due: frequency=1h, or for a calendar schedule
// schedule="0 1 * * *" with its time zone, its jitter and when the next round starts.
func timing(g *v1alpha1.OaatGroup, now time.Time) string {
	if g.Spec.Schedule == "" {
		return "frequency=" + string(groupspec.FrequencyOf(g))
	}
	s := fmt.Sprintf("schedule=%q  timeZone=%s", string(g.Spec.Schedule), groupspec.TimeZoneOf(g))
	if g.Spec.Jitter != "" {
		s += "  jitter=" + string(g.Spec.Jitter)
	}
	if next := g.Status.NextRoundAt; next != nil {
		if next.After(now) {
			s += fmt.Sprintf("  nextRound=in %s (%s)", age(now, next.Time), next.UTC().Format(time.RFC3339))
		} else {
			s += "  nextRound=now"
		}
	}
	return s
}
