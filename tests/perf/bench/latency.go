package main

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// timings are the start delays of the item pods of some groups, each classified by what made
// the pod due, and the starts that came too early.
type timings struct {
	// reaction: the pod was due because the group's previous pod ended (its item was already
	// eligible); the delay runs from that end to the new pod.
	reaction perfkit.Latencies
	// precision: the pod was due because its item became eligible while the group was idle; the
	// delay runs from that instant (lastSuccess + frequency, as status records it) to the pod.
	precision perfkit.Latencies
	// early lists pods created before their item was eligible, or while the group's previous pod
	// still lived: a duplicate run.
	early []string
}

// window is an interval of time; a zero end means no end.
type window struct{ from, to time.Time }

func (w window) holds(t time.Time) bool {
	return !t.Before(w.from) && (w.to.IsZero() || t.Before(w.to))
}

// measureStarts classifies the start of every item pod of the groups whose trigger (the end of
// the group's previous pod or its item's eligibility, whichever came last) lies in the window.
// An item is eligible frequency after its last successful run ended, as status records it (the
// container's finishedAt, whole seconds); an item that never succeeded is eligible at once.
func measureStarts(byGroup map[string][]perfkit.PodLife, frequency time.Duration, in window) timings {
	var t timings
	for _, pods := range byGroup {
		lastSuccess := map[string]time.Time{}
		for i, p := range pods {
			var eligibleAt time.Time
			if last, ok := lastSuccess[p.Item]; ok {
				eligibleAt = last.Add(frequency)
			}
			if p.Phase == corev1.PodSucceeded && !p.FinishedAt.IsZero() {
				lastSuccess[p.Item] = p.FinishedAt
			}
			if i == 0 {
				continue
			}
			prev := pods[i-1]
			if prev.Live() || p.SeenCreated.Before(prev.SeenEnded) || p.SeenCreated.Before(eligibleAt) {
				t.early = append(t.early, fmt.Sprintf("%s/%s (item %s, seen %s; previous pod %s ended %s; eligible %s)",
					p.Namespace, p.Name, p.Item, p.SeenCreated.Format(time.RFC3339Nano), prev.Name,
					prev.SeenEnded.Format(time.RFC3339Nano), eligibleAt.Format(time.RFC3339)))
				continue
			}
			if eligibleAt.After(prev.SeenEnded) {
				if in.holds(eligibleAt) {
					t.precision = append(t.precision, p.SeenCreated.Sub(eligibleAt))
				}
			} else if in.holds(prev.SeenEnded) {
				t.reaction = append(t.reaction, p.SeenCreated.Sub(prev.SeenEnded))
			}
		}
	}
	return t
}

// endedIn counts the pods that ended within the window.
func endedIn(pods []perfkit.PodLife, in window) int {
	n := 0
	for _, p := range pods {
		if !p.Live() && in.holds(p.SeenEnded) {
			n++
		}
	}
	return n
}
