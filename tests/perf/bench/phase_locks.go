package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
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
// slots), then one of BENCH_LOCK_CAPACITY (groups wait for each other); then what a slot's
// hand-off costs with BENCH_LOCK_WAITERS groups waiting (measureHandOff).
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
	if cfg.waiters > 0 {
		return b.measureHandOff(ctx, "bench-lock-handoff")
	}
	return nil
}

// measureHandOff measures what a slot's hand-off costs when many groups wait for it: cfg.waiters
// groups of one item name one OaatLock of capacity 1; once every group has been reconciled (all but
// the holder and those whose one run is over wait), the window counts the runs that finished and
// the group reconciles the manager made. Waking every group
// naming the lock at each hand-off would cost about cfg.waiters reconciles a run; waking the
// holders and the next waiter, a few.
func (b *bench) measureHandOff(ctx context.Context, ns string) error {
	cfg := b.cfg15.locks
	b.rep.Printf("\n### hand-off: %d groups of 1 item waiting on one lock of capacity 1", cfg.waiters)
	if err := b.env.Namespace(ctx, ns); err != nil {
		return err
	}
	objs := []client.Object{
		perfkit.NewOaatType(ns, "bench", perfkit.PodTemplate(cfg.run.String(), "0")),
		&v1alpha1.OaatLock{ObjectMeta: metav1.ObjectMeta{Name: lockName, Namespace: ns}, Spec: v1alpha1.OaatLockSpec{Capacity: 1}},
	}
	for i := range cfg.waiters {
		g := perfkit.NewGroup(ns, "g-"+strconv.Itoa(i), "bench", "24h", perfkit.Items(1))
		g.Spec.Locks = []string{lockName}
		objs = append(objs, g)
	}
	created := time.Now()
	if err := perfkit.CreateAll(ctx, b.env.Client, objs); err != nil {
		return err
	}
	// Each group runs its one item once (frequency 24 h): once every group has been reconciled,
	// all but the holder and those whose run is over wait.
	var reconciled, waiting int
	if !perfkit.WaitFor(ctx, 10*time.Minute, func() bool {
		groups := &v1alpha1.OaatGroupList{}
		if err := b.env.Client.List(ctx, groups, client.InNamespace(ns)); err != nil {
			return false
		}
		reconciled, waiting = 0, 0
		for _, g := range groups.Items {
			if g.Status.ObservedGeneration > 0 {
				reconciled++
			}
			if g.Status.LockWait != nil {
				waiting++
			}
		}
		return reconciled == cfg.waiters
	}) {
		return fmt.Errorf("hand-off: %d of %d groups reconciled after 10 minutes", reconciled, cfg.waiters)
	}
	// Each group's first pass writes its status, whose event brings a second pass: the window
	// starts once the manager's work queue has drained them.
	reconciledIn := time.Since(created)
	depth := 0.0
	perfkit.WaitFor(ctx, 30*time.Second, func() bool {
		samples, err := b.manager.Metrics(ctx)
		if err != nil {
			return false
		}
		depth = samples.Sum("workqueue_depth", map[string]string{"name": "oaatgroup"})
		return depth <= 2
	})
	// A waiting group is looked at again after lockRecheck should no event wake it: the groups
	// that began to wait together come back together a minute later, a thousand reconciles that no
	// hand-off caused. The window ends before them.
	window := min(cfg.window, time.Until(created.Add(lockRecheck-5*time.Second)))
	if window < 20*time.Second {
		return fmt.Errorf("hand-off: the groups took %s to be reconciled and their passes drained, which leaves less than 20 s before their first periodic recheck", time.Since(created).Round(time.Second))
	}
	b.rep.Printf("  every group reconciled %s after their creation, %d of them waiting for the lock; the group work queue at %.0f %s after it; measured for %s, up to 5 s before their first periodic recheck (%s after their first pass)",
		reconciledIn.Round(time.Second), waiting, depth, time.Since(created).Round(time.Second), window.Round(time.Second), lockRecheck)
	iv, in, err := b.measure(ctx, window, nil)
	if err != nil {
		return err
	}
	runs := endedIn(b.pods.Pods(ns), in)
	lockWrites := iv.api.Count(func(k perfkit.RequestKey) bool {
		return k.Resource == "oaatlocks" && k.Write() && !k.Failed
	})
	b.rep.Printf("  finished runs (hand-offs): %d; group reconciles: %.0f, %.1f per hand-off with %d to %d groups waiting (waking every group naming the lock would cost about as many), mean %s each; lock status writes per hand-off: %.2f",
		runs, iv.reconciles, perfkit.PerRun(iv.reconciles, runs), waiting-runs, waiting, iv.reconcileTime.Round(time.Microsecond), perfkit.PerRun(lockWrites, runs))
	b.describeManager(iv)
	return b.deleteNamespace(ctx, ns)
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
		objs = append(objs, &v1alpha1.OaatLock{
			ObjectMeta: metav1.ObjectMeta{Name: lockName, Namespace: ns},
			Spec:       v1alpha1.OaatLockSpec{Capacity: int32(v.capacity)},
		})
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
