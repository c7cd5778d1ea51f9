package support

import (
	"fmt"
	"time"
)

// Probes returns the pods of records that ran as a circuit breaker's probes, those created from
// the first probe's time (from) that ended by the breaker's closing (to), and each probe that
// lived beside another pod of records, described. A watcher sees a pod's end late, by up to slack:
// two pods count as beside each other only when they overlap by more than slack.
func Probes(records []PodRecord, from, to time.Time, slack time.Duration) (probes []PodRecord, beside []string) {
	for _, probe := range records {
		if probe.Created.Time.Before(from) || probe.Ended.IsZero() || probe.Ended.After(to.Add(slack)) {
			continue
		}
		probes = append(probes, probe)
		for _, other := range records {
			if other.Name != probe.Name && other.Created.Time.Before(endOf(probe).Add(-slack)) &&
				probe.Created.Time.Before(endOf(other).Add(-slack)) {
				beside = append(beside, fmt.Sprintf("probe %s beside pod %s", probe, other))
			}
		}
	}
	return probes, beside
}

// endOf is when the pod ended, or a time far ahead while it is live.
func endOf(r PodRecord) time.Time {
	if r.Ended.IsZero() {
		return time.Now().Add(time.Hour)
	}
	return r.Ended
}
