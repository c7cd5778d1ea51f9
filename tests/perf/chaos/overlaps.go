package main

import (
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// splitOverlaps sorts the overlaps the tracker saw into those the pods' own timestamps confirm
// or cannot refute, and those they refute. After the API server restarts, the observer's informer
// lists again and hands over what changed meanwhile in no particular order across pods: it can
// show a group's new pod before the update that ended the previous one. Such an overlap is
// refuted when, of its two pods, the older run's containers had finished (finishedAt, whole
// seconds) no later than the newer pod was created (creationTimestamp, whole seconds). A real
// overlap, the newer pod created while the older one ran, leaves the older one finishing after
// the newer one's creation, unless both fall in the same second; a pod that ended without a
// finished container (deleted while it ran) refutes nothing.
func splitOverlaps(overlaps []support.Overlap, pods []perfkit.PodLife) (confirmed, refuted []support.Overlap) {
	byName := make(map[string]perfkit.PodLife, len(pods))
	for _, p := range pods {
		byName[p.Name] = p
	}
	for _, o := range overlaps {
		if refutedByTimestamps(o, byName) {
			refuted = append(refuted, o)
		} else {
			confirmed = append(confirmed, o)
		}
	}
	return confirmed, refuted
}

func refutedByTimestamps(o support.Overlap, byName map[string]perfkit.PodLife) bool {
	if len(o.Pods) != 2 {
		return false
	}
	a, okA := byName[o.Pods[0]]
	b, okB := byName[o.Pods[1]]
	if !okA || !okB {
		return false
	}
	older, newer := a, b
	if b.Created.Before(a.Created) || (b.Created.Equal(a.Created) && b.SeenCreated.Before(a.SeenCreated)) {
		older, newer = b, a
	}
	return !older.FinishedAt.IsZero() && !older.FinishedAt.After(newer.Created)
}
