package main

import (
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// splitOverlaps sorts the moments the tracker saw with more live pods in one of its sets than
// capacity (a group's pods with capacity 1, a lock's with its capacity) into those the pods' own
// timestamps confirm or cannot refute, and those they refute. After the API server restarts, the
// observer's informer lists again and hands over what changed meanwhile in no particular order
// across pods: it can show a new pod before the update that ended an earlier one. Such a moment is
// refuted when, at the creation of its newest pod (creationTimestamp, whole seconds), no more than
// capacity of its pods can have been live: the others' containers had finished (finishedAt, whole
// seconds) no later than that. A real excess, the newest pod created while capacity others ran,
// leaves them finishing after its creation, unless they fall in the same second; a pod that ended
// without a finished container (deleted while it ran) refutes nothing. Moments with no more pods
// than capacity are not returned.
func splitOverlaps(overlaps []support.Overlap, pods []perfkit.PodLife, capacity int) (confirmed, refuted []support.Overlap) {
	byName := make(map[string]perfkit.PodLife, len(pods))
	for _, p := range pods {
		byName[p.Name] = p
	}
	for _, o := range overlaps {
		switch {
		case len(o.Pods) <= capacity:
		case refutedByTimestamps(o, byName, capacity):
			refuted = append(refuted, o)
		default:
			confirmed = append(confirmed, o)
		}
	}
	return confirmed, refuted
}

func refutedByTimestamps(o support.Overlap, byName map[string]perfkit.PodLife, capacity int) bool {
	lives := make([]perfkit.PodLife, 0, len(o.Pods))
	for _, name := range o.Pods {
		p, ok := byName[name]
		if !ok {
			return false
		}
		lives = append(lives, p)
	}
	newest := 0
	for i, p := range lives {
		n := lives[newest]
		if p.Created.After(n.Created) || (p.Created.Equal(n.Created) && p.SeenCreated.After(n.SeenCreated)) {
			newest = i
		}
	}
	live := 1 // the newest
	for i, p := range lives {
		if i != newest && (p.FinishedAt.IsZero() || p.FinishedAt.After(lives[newest].Created)) {
			live++
		}
	}
	return live <= capacity
}
