package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// lockName is the OaatLock that the groups of the locks phase name.
const lockName = "shared"

// lockRecheck is how soon the operator looks again at a group waiting for a lock that no event
// woke (the planner's lockRecheck).
const lockRecheck = time.Minute

// lockRun is what one variant of the locks phase measured.
type lockRun struct {
	// name says which variant: no lock, or a lock of some capacity.
	name string
	// capacity is the lock's; 0 for the groups that name no lock.
	capacity int
	runs     int
	elapsed  time.Duration
	// perRun are the operator's writes per finished run; failedLockWrites its failed writes of
	// the lock's status per finished run (conflicts between groups taking slots at once).
	perRun           opWrites
	failedLockWrites float64
	// waits are the slots taken and meanWait their mean wait (oaat_lock_wait_seconds);
	// waitQuantiles the upper bounds of its buckets that hold the 50th, 90th and 99th percentile.
	waits         float64
	meanWait      time.Duration
	waitQuantiles [3]float64
}

// lockPhase measures what a shared lock costs: the same groups run for the same window, each
// time in a namespace of their own, first naming no lock, then naming one OaatLock whose
// capacity is the number of groups (no group ever waits: the cost of taking and giving back
// slots), then one of BENCH_LOCK_CAPACITY (groups wait for each other). What a slot's hand-off
// costs is the handoff phase's (phase_handoff.go).
func (b *bench) lockPhase(ctx context.Context) error {
	cfg := b.cfg15.locks
	b.rep.Printf("\n## Shared lock: %d groups x %d items, runs of %s, frequency %s, each variant measured for %s from the groups' creation",
		cfg.groups, cfg.items, cfg.run, cfg.frequency, cfg.window)
	variants := []lockRun{{name: "no lock"}, {name: "lock of capacity " + strconv.Itoa(cfg.groups) + " (one slot per group: nobody waits)", capacity: cfg.groups}}
	if cfg.capacity < cfg.groups {
		variants = append(variants, lockRun{name: "lock of capacity " + strconv.Itoa(cfg.capacity) + " (groups wait for each other)", capacity: cfg.capacity})
	}
	for i := range variants {
		if err := b.measureLockRun(ctx, "bench-lock-"+strconv.Itoa(i), &variants[i]); err != nil {
			return err
		}
	}
	b.results15.locks = variants
	base := variants[0].perRun
	b.rep.Printf("  extra operator writes per finished run against no lock (target: at most 2 with a lock, none without):")
	for _, v := range variants[1:] {
		b.rep.Printf("    %s: %s; failed lock status writes (conflicts, not counted) %.2f", v.name, v.perRun.minus(base).signed(), v.failedLockWrites)
	}
	return nil
}

// measureLockRun creates the groups of one variant, in namespace ns, measures the window from their
// creation on, reports it and deletes the namespace.
func (b *bench) measureLockRun(ctx context.Context, ns string, v *lockRun) error {
	cfg := b.cfg15.locks
	b.rep.Printf("\n### %s", v.name)
	if err := b.env.Namespace(ctx, ns); err != nil {
		return err
	}
	objs := []client.Object{perfkit.NewOaatType(ns, "bench", perfkit.PodTemplate(cfg.run.String(), "0"))}
	if v.capacity > 0 {
		objs = append(objs, support.Lock(ns, lockName, int32(v.capacity)))
	}
	for i := range cfg.groups {
		g := perfkit.NewGroup(ns, "g-"+strconv.Itoa(i), "bench", cfg.frequency.String(), perfkit.Items(cfg.items))
		if v.capacity > 0 {
			g.Spec.Locks = []string{lockName}
		}
		objs = append(objs, g)
	}
	iv, in, err := b.measure(ctx, cfg.window, func() error { return perfkit.CreateAll(ctx, b.env.Client, objs) })
	if err != nil {
		return err
	}
	samples, err := b.manager.Metrics(ctx)
	if err != nil {
		return err
	}
	pods := b.pods.Pods(ns)
	v.runs, v.elapsed = endedIn(pods, in), iv.elapsed
	v.perRun = operatorWrites(iv.api).perRun(v.runs)
	v.failedLockWrites = perfkit.PerRun(iv.api.Count(func(k perfkit.RequestKey) bool {
		return k.Resource == "oaatlocks" && k.Write() && k.Failed
	}), v.runs)
	for _, e := range measureStarts(perfkit.ByGroup(pods), cfg.frequency, window{}).early {
		b.findingf("started while not due: %s", e)
	}
	// The counters of the manager's process hold this namespace's waits only: each variant has
	// its own namespace.
	match := map[string]string{"namespace": ns}
	v.waits = samples.Sum("oaat_lock_wait_seconds_count", match)
	v.meanWait = mean(samples.Sum("oaat_lock_wait_seconds_sum", match), v.waits)
	for i, q := range []float64{0.5, 0.9, 0.99} {
		v.waitQuantiles[i] = samples.BucketQuantile("oaat_lock_wait_seconds_bucket", match, q)
	}
	b.rep.Printf("  finished runs: %d (%.2f runs/s)", v.runs, float64(v.runs)/iv.elapsed.Seconds())
	b.rep.Printf("  operator writes per finished run: %s; its client counted %.2f", v.perRun, perfkit.PerRun(iv.opWrites, v.runs))
	if v.capacity > 0 {
		b.rep.Printf("  slots taken: %.0f; wait for the lock (oaat_lock_wait_seconds): mean %s, p50 <= %s, p90 <= %s, p99 <= %s (bucket bounds)",
			v.waits, v.meanWait.Round(time.Millisecond), bound(v.waitQuantiles[0]), bound(v.waitQuantiles[1]), bound(v.waitQuantiles[2]))
	}
	b.rep.Printf("  all workload writes per finished run; by request:\n%s", perfkit.Indent("    ", iv.api.WriteTable(workload, v.runs)))
	b.reportFailedWrites(iv)
	b.describeManager(iv)
	return b.deleteNamespace(ctx, ns)
}

// bound formats a bucket's upper bound in seconds.
func bound(le float64) string {
	if math.IsInf(le, 1) {
		return "+Inf"
	}
	return fmt.Sprintf("%g s", le)
}
