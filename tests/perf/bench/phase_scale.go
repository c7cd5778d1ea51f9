package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

const scaleNamespace = "bench-scale"

// scalePhase creates the groups at once, lets the operator settle for the warm-up, measures the
// window, then restarts the manager.
func (b *bench) scalePhase(ctx context.Context) error {
	cfg := b.cfg
	ns := scaleNamespace
	b.rep.Printf("\n## Scale: %d groups x %d items, runs of %s, frequency %s; %s warm-up, then %s measured",
		cfg.groups, cfg.items, cfg.scaleRun, cfg.scaleFrequency, cfg.scaleWarmup, cfg.scaleWindow)
	if err := b.env.Namespace(ctx, ns); err != nil {
		return err
	}
	created := time.Now()
	if err := b.createGroups(ctx, ns, cfg.groups, cfg.items, cfg.scaleRun, cfg.scaleFrequency); err != nil {
		return err
	}
	b.rep.Printf("  created %d groups in %s", cfg.groups, time.Since(created).Round(time.Millisecond))
	if err := perfkit.Sleep(ctx, cfg.scaleWarmup); err != nil {
		return err
	}
	iv, in, err := b.measure(ctx, cfg.scaleWindow, nil)
	if err != nil {
		return err
	}
	usage, err := b.manager.Usage()
	if err != nil {
		return err
	}
	pods := b.pods.Pods(ns)
	runs := endedIn(pods, in)
	b.results.peakRSS = usage.PeakRSS
	if err := b.reportMemory(ctx, usage, "at the end of the window"); err != nil {
		return err
	}
	b.describeManager(iv)
	b.rep.Printf("  finished runs in the window: %d (%.1f runs/s); pods created since the groups were: %d; live now: %d",
		runs, float64(runs)/iv.elapsed.Seconds(), len(pods), countLive(pods))
	b.results.scaleReaction = measureStarts(perfkit.ByGroup(pods), cfg.scaleFrequency, in).reaction
	b.rep.Printf("  reaction under this load: %s", b.results.scaleReaction.Summary())
	b.results.scaleWritesPerRun, b.results.scaleTotal = b.reportOperatorWrites(iv, runs)
	b.results.scaleWriteRate = iv.api.Count(workload) / iv.elapsed.Seconds()
	b.results31.reconcile = iv.reconcileTime
	b.results31.reads, b.results31.writes = perfkit.PerRun(iv.opReads, runs), perfkit.PerRun(iv.opWrites, runs)
	if err := b.restart(ctx); err != nil {
		return err
	}
	if err := b.fill(ctx); err != nil {
		return err
	}
	for _, e := range measureStarts(perfkit.ByGroup(b.pods.Pods(ns)), cfg.scaleFrequency, window{}).early {
		b.findingf("started while not due: %s", e)
	}
	return nil
}

// fill lets the operator run until every item of every group has run once, so that it holds what
// it holds in the steady state: every group and the last pod of each of its items; then it reads
// the manager's memory.
func (b *bench) fill(ctx context.Context) error {
	cfg := b.cfg
	b.rep.Printf("\n## Steady state: until every item has run once (at most %s)", cfg.fillTimeout)
	want := cfg.groups * cfg.items
	started := time.Now()
	all := perfkit.WaitFor(ctx, cfg.fillTimeout, func() bool {
		pods := b.pods.Pods(scaleNamespace)
		return len(pods) >= want && countLive(pods) == 0
	})
	pods := b.pods.Pods(scaleNamespace)
	b.rep.Printf("  item pods created: %d of %d, live: %d, after %s more", len(pods), want, countLive(pods), time.Since(started).Round(time.Second))
	if !all {
		b.rep.Printf("  not every item ran within %s: the memory below holds fewer pods than the steady state", cfg.fillTimeout)
	}
	usage, err := b.manager.Usage()
	if err != nil {
		return err
	}
	b.results.peakRSS = max(b.results.peakRSS, usage.PeakRSS)
	b.results31.heldRSS = usage.RSS
	if err := b.reportMemory(ctx, usage, "holding every group and the last pod of each item"); err != nil {
		return err
	}
	return b.reportHeap(ctx)
}

// reportHeap prints where the manager's heap in use is, by function: the attribution of the
// memory it holds in the steady state. The profile stays in the cluster's state directory.
func (b *bench) reportHeap(ctx context.Context) error {
	path := filepath.Join(b.env.Cluster.StateDir, "manager-heap.pb.gz")
	if err := b.manager.HeapProfile(ctx, path); err != nil {
		return err
	}
	top, err := perfkit.HeapTop(ctx, path, 15)
	if err != nil {
		return err
	}
	b.rep.Printf("  the manager's heap in use by function (go tool pprof -top -sample_index=inuse_space %s):\n%s",
		filepath.Base(path), perfkit.Indent("    ", top))
	return nil
}

// reportMemory prints the manager's memory.
func (b *bench) reportMemory(ctx context.Context, usage perfkit.Usage, when string) error {
	samples, err := b.manager.Metrics(ctx)
	if err != nil {
		return err
	}
	b.rep.Printf("  manager memory %s: RSS %s, peak %s (targets: < 200 MiB, issue 8; <= 150 MiB, issue 31); Go heap in use %s, of which allocated objects %s",
		when, perfkit.MiB(usage.RSS), perfkit.MiB(usage.PeakRSS), perfkit.MiB(int64(samples.Sum("go_memstats_heap_inuse_bytes", nil))),
		perfkit.MiB(int64(samples.Sum("go_memstats_heap_alloc_bytes", nil))))
	return nil
}

// restart kills the manager with SIGKILL, waits until the pods it started have all ended, and
// starts it again. Resume time is, for each group that had an eligible item when the new process
// started, the time from that start (exec) to the creation of the group's next pod as the watch
// saw it; all groups have resumed at the largest.
func (b *bench) restart(ctx context.Context) error {
	cfg := b.cfg
	b.rep.Printf("\n## Restart: SIGKILL, wait until no item pod lives, start again")
	if err := b.manager.Kill(); err != nil {
		return err
	}
	killed := time.Now()
	if !perfkit.WaitFor(ctx, cfg.scaleRun+time.Minute, func() bool { return countLive(b.pods.Pods(scaleNamespace)) == 0 }) {
		return fmt.Errorf("item pods still live a minute after their run time")
	}
	b.rep.Printf("  the last pod ended %s after the kill", time.Since(killed).Round(time.Millisecond))
	due := dueGroups(perfkit.ByGroup(b.pods.Pods(scaleNamespace)), cfg.groups, cfg.items, cfg.scaleFrequency, time.Now())
	before, err := b.read(ctx)
	if err != nil {
		return err
	}
	if err := b.manager.Start(); err != nil {
		return err
	}
	started := b.manager.StartedAt()
	if err := b.manager.WaitReady(ctx, time.Minute); err != nil {
		return err
	}
	ready := time.Since(started)
	resumed := func() (perfkit.Latencies, int) {
		var l perfkit.Latencies
		first := map[string]time.Time{}
		for _, p := range b.pods.Pods(scaleNamespace) {
			if _, ok := due[p.Group]; ok && p.SeenCreated.After(started) {
				if t, ok := first[p.Group]; !ok || p.SeenCreated.Before(t) {
					first[p.Group] = p.SeenCreated
				}
			}
		}
		for _, t := range first {
			l = append(l, t.Sub(started))
		}
		return l, len(due) - len(first)
	}
	perfkit.WaitFor(ctx, cfg.resumeTimeout, func() bool { _, left := resumed(); return left == 0 })
	after, err := b.read(ctx)
	if err != nil {
		return err
	}
	l, left := resumed()
	b.results.resume, b.results.resumed = l.Max(), len(due)
	b.rep.Printf("  /readyz (the caches of the groups and their pods synced) answered %s after the start; the first pod was created %s after it",
		ready.Round(time.Millisecond), perfkit.Ms(l.Min()))
	b.rep.Printf("  groups with an eligible item at the start: %d; resumed: %d, not within %s: %d", len(due), len(l), cfg.resumeTimeout, left)
	b.rep.Printf("  time from the start to each group's next pod (target: all within 10 s): %s", l.Summary())
	if left > 0 {
		b.results.resume = cfg.resumeTimeout
	}
	// The new process's counters and CPU count from its start.
	b.describeManager(between(reading{at: started, api: before.api, op: perfkit.Samples{}}, after))
	b.reportResume(due, started, b.firstPods(due, started), between(before, after))
	return nil
}

func countLive(pods []perfkit.PodLife) int {
	n := 0
	for _, p := range pods {
		if p.Live() {
			n++
		}
	}
	return n
}
