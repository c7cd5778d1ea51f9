package main

import (
	"fmt"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// createdLate lists the pods created after the observer had seen their run ended in status
// (recorded, or withdrawn as never started): a replica that still acted on a run the group had
// moved past, as an old leader resuming after a pause does. The pod's creationTimestamp has whole
// seconds and the observer sees a write after it was made, so a pod counts only when its
// creationTimestamp is more than a second after that sight: never a pod created before the write.
func (l *ledger) createdLate(pods []perfkit.PodLife) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var late []string
	for _, p := range pods {
		seen, ok := l.endSeen[p.Name]
		if ok && p.Created.After(seen.Add(time.Second)) {
			late = append(late, fmt.Sprintf("group %s: pod %s created at %s, %s after its run was seen ended in status",
				p.Group, p.Name, p.Created.Format(time.TimeOnly), p.Created.Sub(seen).Round(time.Millisecond)))
		}
	}
	return late
}
