package statusview

import (
	"fmt"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// timing says when the group's items are due: frequency=1h, or for a calendar schedule
// schedule="0 1 * * *" with its time zone, its jitter and when the next round starts.
func timing(g *v1alpha1.OaatGroup, now time.Time) string {
	if g.Spec.Schedule == "" {
		frequency := g.Spec.Frequency
		if frequency == "" {
			frequency = v1alpha1.DefaultFrequency
		}
		return "frequency=" + string(frequency)
	}
	zone := g.Spec.ScheduleTimeZone
	if zone == "" {
		zone = "UTC"
	}
	s := fmt.Sprintf("schedule=%q  timeZone=%s", string(g.Spec.Schedule), zone)
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
