package support

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Probes returns the pods of records that ran as a circuit breaker's probes, and each probe that
// lived beside another pod of records, described. The probes are the pods created from the time
// from (the second after the breaker opened: a run under way at the opening, or a probe started
// in its second, may share the opening's second, as timestamps have a second's precision) up to
// the probe that closed the breaker: the first of them to succeed. It ended before the groups'
// next runs were created, so they are not probes. A watcher sees a pod's end late, by up to
// slack: two pods count as beside each other only when they overlap by more than slack.
func Probes(records []PodRecord, from time.Time, slack time.Duration) (probes []PodRecord, beside []string) {
	var closing time.Time
	for _, r := range records {
		if !r.Created.Time.Before(from) && r.Phase == corev1.PodSucceeded && !r.Ended.IsZero() &&
			(closing.IsZero() || r.Ended.Before(closing)) {
			closing = r.Ended
		}
	}
	for _, probe := range records {
		if probe.Created.Time.Before(from) || probe.Ended.IsZero() || probe.Ended.After(closing) {
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
	slices.SortFunc(probes, func(a, b PodRecord) int { return a.Ended.Compare(b.Ended) })
	return probes, beside
}

// endOf is when the pod ended, or a time far ahead while it is live.
func endOf(r PodRecord) time.Time {
	if r.Ended.IsZero() {
		return time.Now().Add(time.Hour)
	}
	return r.Ended
}
