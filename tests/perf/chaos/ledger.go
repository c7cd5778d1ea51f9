package main

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// ledger reads, from the writes of every group's status in the order they were made, when each
// run's outcome was recorded. An outcome is recorded in the write that ends the run's
// status.currentRun (the only key under which it is recorded) and sets its item's lastPodName,
// lastSuccess or lastFailure and failureCount. A write that changes those fields of an item whose
// run it does not end records an outcome a second time; a write that ends a run whose pod existed
// without recording it leaves the run unrecorded.
//
// The observer may miss writes: when its watch cannot resume (after the API server's restart) it
// lists again and sees only the latest state. A run whose start the ledger never saw, or whose end
// it saw only through a later run of the same item, is then unverified: its outcome may be in a
// write the observer missed. The outcome events decide those.
type ledger struct {
	mu       sync.Mutex
	last     map[string]*v1alpha1.OaatGroupStatus // group → its status as last seen
	started  map[string]bool                      // pods seen as a current run
	recorded map[string]int                       // pod → how many times its outcome was recorded
	// withdrawn are runs ended without an outcome: a pod that could not be created (the intent
	// is withdrawn), unless the pod did exist.
	withdrawn map[string]string
	// unverified are runs whose outcome may be in a write the observer missed.
	unverified map[string]bool
	// extra describes each write that recorded an outcome outside the end of its run.
	extra []string
	// removed counts runs ended in the write that also dropped their item (removed from the
	// spec meanwhile): the outcome is recorded, but its fields leave status with the item.
	removed int
	writes  int
	// endSeen is when the observer first saw each run ended in status (recorded or withdrawn).
	endSeen map[string]time.Time
	// outcomes are the outcomes recorded in the writes that ended their runs, by pod.
	outcomes map[string]outcome
}

// outcome is a run's outcome as the write that ended the run recorded it: its item's lastReason,
// and whether its failureCount grew.
type outcome struct {
	reason string
	failed bool
}

func newLedger() *ledger {
	return &ledger{
		last:       map[string]*v1alpha1.OaatGroupStatus{},
		started:    map[string]bool{},
		recorded:   map[string]int{},
		withdrawn:  map[string]string{},
		unverified: map[string]bool{},
		endSeen:    map[string]time.Time{},
		outcomes:   map[string]outcome{},
	}
}

// observe takes the group as a watch delivered it, at this instant.
func (l *ledger) observe(g *v1alpha1.OaatGroup) { l.observeAt(g, time.Now()) }

func (l *ledger) observeAt(g *v1alpha1.OaatGroup, seen time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev, cur := l.last[g.Name], g.Status.DeepCopy()
	l.last[g.Name] = cur
	if cur.CurrentRun != nil {
		l.started[cur.CurrentRun.PodName] = true
	}
	if prev == nil || equality.Semantic.DeepEqual(prev, cur) {
		return
	}
	l.writes++
	var ended *v1alpha1.CurrentRun
	if pr := prev.CurrentRun; pr != nil && (cur.CurrentRun == nil || cur.CurrentRun.PodName != pr.PodName) {
		ended = pr
	}
	if ended != nil {
		if _, ok := l.endSeen[ended.PodName]; !ok {
			l.endSeen[ended.PodName] = seen
		}
		l.end(g.Name, ended, itemOf(prev, ended.Item), itemOf(cur, ended.Item), cur.RunCount)
	}
	for i := range cur.Items {
		it := &cur.Items[i]
		if ended != nil && it.Name == ended.Item {
			continue
		}
		before := itemOf(prev, it.Name)
		if before == nil || !outcomeChanged(before, it) {
			continue
		}
		l.recorded[it.LastPodName]++
		if l.started[it.LastPodName] {
			l.extra = append(l.extra, fmt.Sprintf("group %s item %s: outcome of pod %s recorded while its run was not the one ending",
				g.Name, it.Name, it.LastPodName))
		} else {
			l.unverified[it.LastPodName] = true // its start and end were both missed
		}
	}
}

// end accounts for the end of a run in a write: the item's entry before and after it.
func (l *ledger) end(group string, run *v1alpha1.CurrentRun, before, after *v1alpha1.ItemStatus, runCount int64) {
	switch {
	case after == nil:
		l.recorded[run.PodName]++
		l.removed++
	case after.LastPodName == run.PodName && outcomeChanged(before, after):
		l.recorded[run.PodName]++
		var failures int32
		if before != nil {
			failures = before.FailureCount
		}
		l.outcomes[run.PodName] = outcome{reason: after.LastReason, failed: after.FailureCount > failures}
	case after.LastPodName != "" && !l.started[after.LastPodName] && outcomeChanged(before, after):
		// A later run of the item, whose start was missed, has recorded its outcome since: this
		// run's end is in a missed write.
		l.recorded[after.LastPodName]++
		l.unverified[after.LastPodName] = true
		l.unverified[run.PodName] = true
	default:
		l.withdrawn[run.PodName] = fmt.Sprintf("group %s, status write with runCount %d", group, runCount)
	}
}

// outcomeChanged reports whether an item's recorded outcome differs; a nil before means the item
// had no entry, which an outcome then creates.
func outcomeChanged(before, after *v1alpha1.ItemStatus) bool {
	if before == nil {
		return after.LastPodName != ""
	}
	return before.LastPodName != after.LastPodName || before.FailureCount != after.FailureCount ||
		!before.LastSuccess.Equal(after.LastSuccess) || !before.LastFailure.Equal(after.LastFailure)
}

func itemOf(st *v1alpha1.OaatGroupStatus, name string) *v1alpha1.ItemStatus {
	return support.ItemStatus(&v1alpha1.OaatGroup{Status: *st}, name)
}

// verdict is the ledger's account of the runs whose pods ended.
type verdict struct {
	never, twice []string // outcome recorded zero times, twice or more: broken invariants
	unverified   []string // outcome maybe in missed writes: the events decide
	extra        []string
	removed      int
	writes       int
}

// judge classifies the ended pods' runs.
func (l *ledger) judge(ended []string) verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := verdict{extra: append([]string(nil), l.extra...), removed: l.removed, writes: l.writes}
	for _, pod := range ended {
		switch n := l.recorded[pod]; {
		case n >= 2:
			v.twice = append(v.twice, pod)
		case n == 1:
		case l.unverified[pod] || !l.started[pod]:
			v.unverified = append(v.unverified, pod)
		case l.withdrawn[pod] != "":
			v.never = append(v.never, pod+" (its pod existed, the run was withdrawn: "+l.withdrawn[pod]+")")
		default:
			v.never = append(v.never, pod)
		}
	}
	return v
}

// phantoms counts the runs recorded as ended whose pod the observer never saw: intents whose pod
// was never created, recorded as failed (PodNotFound).
func (l *ledger) phantoms(seen map[string]bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for pod, times := range l.recorded {
		if times > 0 && l.started[pod] && !seen[pod] {
			n++
		}
	}
	return n
}

// podless counts the runs withdrawn before their pod existed: the pod never ended.
func (l *ledger) podless(ended map[string]bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for pod := range l.withdrawn {
		if !ended[pod] && l.recorded[pod] == 0 {
			n++
		}
	}
	return n
}

// outcomeOf returns the outcome recorded for pod's run in the write that ended it, and whether the
// ledger saw that write.
func (l *ledger) outcomeOf(pod string) (outcome, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.outcomes[pod]
	return o, ok
}
