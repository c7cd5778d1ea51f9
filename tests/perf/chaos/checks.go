package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// reportExits prints the reasons of the replicas' exits on their own, with their counts.
func (c *chaos) reportExits(reasons map[string]int) {
	for reason, n := range reasons {
		c.rep.Printf("    %d x %s", n, reason)
	}
}

// reportFaults prints what the run did to the operator and the cluster.
func (c *chaos) reportFaults() {
	starts, exits, reasons := c.replicas.lifecycle()
	c.rep.Printf("  leader SIGKILLs: %d (no leader to kill at %d chosen instants); replica starts: %d; exits on their own: %d",
		c.faults.kills, c.faults.noLeader, starts, exits)
	c.reportExits(reasons)
	c.rep.Printf("  %s", c.pauser.summary())
	c.rep.Printf("  live item pods deleted: %d; evicted through the Eviction API: %d; spec edits: %d; kube-apiserver restarted once, down for %s",
		c.faults.podDeletes, c.faults.evictions, c.faults.edits, c.faults.apiserverDown.Round(time.Millisecond))
	if c.second != nil {
		starts, exits, reasons := c.second.lifecycle()
		c.rep.Printf("  second installation (%d replica watching %s, Lease in %s, no API proxy): SIGKILLs: %d (none leading at %d chosen instants); starts: %d; exits on their own: %d",
			bReplicaCount, bNamespace, bLeaseNamespace, c.faults.bKills, c.faults.bNoLeader, starts, exits)
		c.reportExits(reasons)
	}
	c.rep.Printf("  shared locks deleted and created again: %d (%d of them holding a slot)",
		c.faults.lockRecreates, c.faults.heldRecreates)
	c.rep.Printf("  lock capacities changed: %d (%d of them by a capacity window of the next minute; %d left the lock's holders above its capacity in force); locks added to a group: %d, removed from one: %d (%d of these edits while the group had a run)",
		c.faults.lockResizes, c.faults.lockWindows, c.faults.lockCuts, c.faults.lockAdds, c.faults.lockRemoves, c.faults.heldEdits)
	if c.second != nil {
		c.rep.Printf("  of these, on the ClusterOaatLock %s: re-creations %d, capacity changes %d, added to or removed from a group %d",
			clusterLock.name, c.faults.clusterRecreates, c.faults.clusterResizes, c.faults.clusterRelocks)
	}
	c.rep.Printf("  API proxy: %s", c.proxy.injectedSummary())
	c.rep.Printf("  slow spells (the replicas' pod watches lag by %s): %d, %s in all",
		c.cfg.watchLag, c.slow.count, c.slow.total.Round(time.Second))
}

// checkInvariants checks, once the groups are drained, the pods and status writes seen since
// the start: overlaps and outcomes must be none; starvation (until the end of the faults at
// end) and the outcome events are reported.
func (c *chaos) checkInvariants(ctx context.Context, end time.Time) {
	pods := c.allPods()
	c.rep.Printf("\n## Invariants (%d item pods seen, of %s)", len(pods), strings.Join(c.namespaces(), " and "))
	overlaps, refuted := splitOverlaps(c.tracker.Overlaps(), pods, 1)
	for _, o := range overlaps {
		c.violationf("overlap: %s", o)
	}
	c.rep.Printf("  groups with two live pods at once: %d (must be 0)", len(overlaps))
	for _, o := range overlaps {
		c.rep.Printf("    %s", o)
	}
	c.rep.Printf("  seen out of order by the observer after a relist, refuted by the pods' own timestamps: %d", len(refuted))
	for _, o := range refuted {
		c.rep.Printf("    %s", o)
	}
	deposedCreates, examples := c.proxy.holder.counts(actCreate)
	deposedWrites, _ := c.proxy.holder.counts(actStatus)
	if deposedCreates > 0 {
		c.violationf("%d pods created by a replica after another had taken the Lease", deposedCreates)
	}
	c.rep.Printf("  pods created by a replica after another had taken the Lease (per the API proxy): %d (must be 0)", deposedCreates)
	c.rep.Printf("  group status writes by a replica after another had taken the Lease: %d", deposedWrites)
	for _, e := range examples {
		c.rep.Printf("    %s", e)
	}
	late := c.observer.ledger.createdLate(pods)
	for _, s := range late {
		c.violationf("late creation: %s", s)
	}
	c.rep.Printf("  pods created after their run was seen ended in status (a replica acting on a run the group had left): %d (must be 0)", len(late))
	for _, s := range late {
		c.rep.Printf("    %s", s)
	}

	var ended []string
	seenPods := map[string]bool{}
	for _, p := range pods {
		seenPods[p.Name] = true
		if !p.Live() && p.Run != "" {
			ended = append(ended, p.Name)
		}
	}
	v := c.observer.ledger.judge(ended)
	events := c.outcomeEvents(ctx)
	var byEvent, unknown int
	for _, pod := range v.unverified {
		switch events[pod] {
		case 0:
			unknown++
		case 1:
			byEvent++
		default:
			v.twice = append(v.twice, pod+" (two outcome events)")
		}
	}
	broken := append(append(append([]string(nil), v.never...), v.twice...), v.extra...)
	for _, s := range broken {
		c.violationf("outcome: %s", s)
	}
	c.rep.Printf("  ended runs: %d, from %d status writes seen; outcome recorded zero times: %d, twice or more: %d, outside the end of its run: %d (must be 0)",
		len(ended), v.writes, len(v.never), len(v.twice), len(v.extra))
	c.rep.Printf("  runs whose status writes the observer missed (it listed again after the API server's restart): %d, of which %d have exactly one outcome event and %d none (not verifiable)",
		len(v.unverified), byEvent, unknown)
	c.rep.Printf("  runs whose item was removed while they ran (recorded as the item left status): %d; intents withdrawn before a pod existed: %d",
		v.removed, c.observer.ledger.podless(seenPods))
	c.rep.Printf("  runs recorded as ended whose pod never existed (recorded PodNotFound; one per intent whose creation was cut short is expected): %d",
		c.observer.ledger.phantoms(seenPods))
	for _, s := range broken {
		c.rep.Printf("    %s", s)
	}
	var none, several int
	for _, pod := range ended {
		switch events[pod] {
		case 0:
			none++
		case 1:
		default:
			several++
		}
	}
	c.rep.Printf("  outcome events (cross-check): ended runs with none: %d (lost with a killed replica's buffer or while the API server was down), with several: %d",
		none, several)

	starved := c.history.starved(perfkit.ByGroup(pods), end, c.cfg.perItem, c.cfg.failover)
	c.rep.Printf("  time with no replica able to act (no leader, or no API server): %s",
		c.history.paused(time.Time{}, end).Round(time.Second))
	c.rep.Printf("  items starved beyond frequency + %s + %s per item of the group and of the groups sharing a lock with it, not counting that time: %d",
		c.cfg.failover, c.cfg.perItem, len(starved))
	for i, s := range starved {
		if i == 10 {
			c.rep.Printf("    ... and %d more", len(starved)-i)
			break
		}
		c.rep.Printf("    %s", s)
	}
	c.checkEvictions()
	c.checkCapacity(pods)
	if c.second != nil {
		mainErrs, err1 := outOfScopeErrors(c.replicas)
		secondErrs, err2 := outOfScopeErrors(c.second)
		if err := errors.Join(err1, err2); err != nil {
			c.rep.Printf("  manager logs not read: %v", err)
		}
		c.rep.Printf("  log lines of an installation asking its cache for a namespace it does not watch (%q: a group of the other installation enqueued from the cluster lock's holders, or the groups of a Namespace): the main one %d, the second one %d (reported)",
			outOfScope, mainErrs, secondErrs)
	}
}

// checkEvictions checks that no run whose pod was evicted through the Eviction API was recorded
// as a failure: an eviction is a disruption (the pod's DisruptionTarget condition), recorded as
// Disrupted, whether or not the operator saw the pod before it was deleted. A pod that ended on
// its own before the eviction took effect keeps its own outcome.
func (c *chaos) checkEvictions() {
	byReason := map[string]int{}
	var failed []string
	unseen := 0
	for pod := range c.faults.evicted {
		o, ok := c.observer.ledger.outcomeOf(pod)
		if !ok {
			unseen++
			continue
		}
		byReason[o.reason]++
		if o.failed {
			failed = append(failed, fmt.Sprintf("%s (recorded %s)", pod, o.reason))
		}
	}
	slices.Sort(failed)
	for _, f := range failed {
		c.violationf("eviction counted as a failure: %s", f)
	}
	reasons := make([]string, 0, len(byReason))
	for r, n := range byReason {
		reasons = append(reasons, fmt.Sprintf("%s %d", cmp.Or(r, "(none)"), n))
	}
	slices.Sort(reasons)
	c.rep.Printf("  evicted runs: %d; recorded, by reason: %s; their write not seen by the observer: %d; counted as a failure: %d (must be 0)",
		len(c.faults.evicted), cmp.Or(strings.Join(reasons, ", "), "none"), unseen, len(failed))
	for _, f := range failed {
		c.rep.Printf("    %s", f)
	}
}

// outcomePod finds the pod in the message of a RunSucceeded or RunFailed event.
var outcomePod = regexp.MustCompile(` in pod ([a-z0-9.-]+)`)

// outcomeEvents counts the outcome events per pod. They are a cross-check: an event is sent after
// the status write it reports, by a buffer that a SIGKILL or the API server's restart may empty
// before it is sent, so a missing one is not a missing outcome; two are two recordings.
func (c *chaos) outcomeEvents(ctx context.Context) map[string]int {
	perPod := map[string]int{}
	var all []corev1.Event
	for _, ns := range c.namespaces() {
		events := &corev1.EventList{}
		if err := c.env.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
			c.rep.Printf("  outcome events: not read: %v", err)
			return perPod
		}
		all = append(all, events.Items...)
	}
	for _, e := range all {
		if e.Reason != string(v1alpha1.ReasonRunSucceeded) && e.Reason != string(v1alpha1.ReasonRunFailed) {
			continue
		}
		if m := outcomePod.FindStringSubmatch(e.Message); m != nil {
			perPod[strings.TrimSuffix(m[1], ".")] += int(max(e.Count, 1))
		}
	}
	return perPod
}
