package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// tickRound is one tick of the jitter phase: its groups, all on the same daily schedule.
type tickRound struct {
	jitter time.Duration
	tick   time.Time
	starts tickStarts
	// planned are the round starts the groups announced (status.nextRoundAt), from the tick.
	planned perfkit.Latencies
	// floor is the least time the API server needs for the tick's writes (tickFloor), measured
	// without jitter; zero with jitter, or when the scale phase, which measures the rate, did not run.
	floor time.Duration
}

// jitterPhase puts BENCH_TICK_GROUPS groups of one item on one daily tick (the first whole
// minute BENCH_TICK_LEAD after their creation, so that the operator has planned every round
// before it) and measures each group's first pod from the tick, first without jitter, then with
// new groups on a new tick with spec.jitter BENCH_JITTER.
func (b *bench) jitterPhase(ctx context.Context) error {
	cfg := b.cfg15.tick
	b.rep.Printf("\n## One schedule tick: %d groups of one item (runs of %s) on one daily tick; without jitter, then new groups on a new tick with spec.jitter %s",
		cfg.groups, cfg.run, cfg.jitter)
	for i, jitter := range []time.Duration{0, cfg.jitter} {
		r, err := b.runTick(ctx, "bench-tick-"+strconv.Itoa(i), jitter)
		if err != nil {
			return err
		}
		b.results15.ticks = append(b.results15.ticks, r)
	}
	return nil
}

// runTick creates the groups of one tick in namespace ns, waits for the tick and for every
// group's first pod, and reports the starts and what limited them. The namespace is kept (its
// groups are idle until the next day): deleting a thousand groups and their pods would load the
// next tick's measurement.
func (b *bench) runTick(ctx context.Context, ns string, jitter time.Duration) (tickRound, error) {
	cfg := b.cfg15.tick
	r := tickRound{jitter: jitter}
	if err := b.env.Namespace(ctx, ns); err != nil {
		return r, err
	}
	r.tick = nextMinute(time.Now().Add(cfg.lead))
	objs := []client.Object{perfkit.NewOaatType(ns, "bench", perfkit.PodTemplate(cfg.run.String(), "0"))}
	names := make([]string, cfg.groups)
	for i := range names {
		names[i] = "t-" + strconv.Itoa(i)
		g := perfkit.NewGroup(ns, names[i], "bench", "", perfkit.Items(1))
		g.Spec.Schedule = v1alpha1.CronSchedule(dailyAt(r.tick))
		if jitter > 0 {
			g.Spec.Jitter = v1alpha1.Duration(strconv.Itoa(int(jitter.Seconds())) + "s")
		}
		objs = append(objs, g)
	}
	created := time.Now()
	if err := perfkit.CreateAll(ctx, b.env.Client, objs); err != nil {
		return r, err
	}
	b.rep.Printf("\n### %s: tick %s (schedule %q, UTC), jitter %s", ns, r.tick.UTC().Format(time.RFC3339), dailyAt(r.tick), jitter)
	b.rep.Printf("  created %d groups in %s", cfg.groups, time.Since(created).Round(time.Millisecond))
	roundStart, err := b.plannedRounds(ctx, ns, r.tick, created)
	if err != nil {
		return r, err
	}
	for _, start := range roundStart {
		r.planned = append(r.planned, start.Sub(r.tick))
	}
	b.rep.Printf("  round starts announced (status.nextRoundAt - tick): p0 %s, p50 %s, max %s (%d groups)",
		perfkit.Ms(r.planned.Percentile(0)), perfkit.Ms(r.planned.Percentile(50)), perfkit.Ms(r.planned.Max()), len(r.planned))
	if err := perfkit.Sleep(ctx, time.Until(r.tick.Add(-time.Second))); err != nil {
		return r, err
	}
	before, err := b.readTick(ctx)
	if err != nil {
		return r, err
	}
	started := func() int {
		return cfg.groups - measureTick(b.pods.Pods(ns), names, r.tick, created, roundStart).missing
	}
	perfkit.WaitFor(ctx, time.Until(r.tick.Add(jitter+cfg.timeout)), func() bool { return started() == cfg.groups })
	after, err := b.readTick(ctx)
	if err != nil {
		return r, err
	}
	r.starts = measureTick(b.pods.Pods(ns), names, r.tick, created, roundStart)
	for _, e := range r.starts.early {
		b.findingf("started before its round: %s", e)
	}
	b.rep.Printf("  first pod of each group from the tick: %s", r.starts.summary())
	b.rep.Printf("  from each group's own round start (tick + its jitter): %s", r.starts.fromRound.Summary())
	b.explainSpread(before, after, r.starts)
	if jitter == 0 {
		r.floor = b.tickFloor(before, after, r.starts)
	}
	return r, nil
}

// tickFloor is the least time the tick's starts could take on this API server: the workload
// writes made from 1 s before the tick to the last start (the operator's, the scheduler's, kwok's)
// at the write rate the API server sustained in the scale window, as the resume's floor
// (resume.go) is made. Zero, said, when the scale phase did not run.
func (b *bench) tickFloor(start, end tickReading, starts tickStarts) time.Duration {
	if b.results.scaleWriteRate == 0 || len(starts.fromTick) == 0 {
		b.rep.Printf("  floor: not computed (the scale phase, which measures the API server's write rate, did not run)")
		return 0
	}
	writes := between(start.reading, end.reading).api.Count(workload)
	floor := time.Duration(writes / b.results.scaleWriteRate * float64(time.Second))
	last := starts.fromTick.Max()
	b.rep.Printf("  floor: %.0f workload writes from 1 s before the tick to the last start, at the %.0f writes/s the API server sustained in the scale window: %s; the last start came %s after the tick = %s the floor (target 1.2x, issue 31)",
		writes, b.results.scaleWriteRate, perfkit.Ms(floor), perfkit.Ms(last), ratio(float64(last), float64(floor)))
	return floor
}

// plannedRounds waits until every group of ns has announced its next round (status.nextRoundAt)
// or until 2 s before the tick, and returns the announced round starts by group.
func (b *bench) plannedRounds(ctx context.Context, ns string, tick, created time.Time) (map[string]time.Time, error) {
	cfg := b.cfg15.tick
	starts := map[string]time.Time{}
	var listErr error
	perfkit.WaitFor(ctx, time.Until(tick.Add(-2*time.Second)), func() bool {
		var list v1alpha1.OaatGroupList
		if listErr = b.env.Client.List(ctx, &list, client.InNamespace(ns)); listErr != nil {
			return true
		}
		for _, g := range list.Items {
			if g.Status.NextRoundAt != nil {
				starts[g.Name] = g.Status.NextRoundAt.Time
			}
		}
		return len(starts) == cfg.groups
	})
	if listErr != nil {
		return nil, listErr
	}
	if len(starts) < cfg.groups {
		b.rep.Printf("  only %d of %d groups had announced their round 2 s before the tick (BENCH_TICK_LEAD %s is too short for this machine): the others are measured from the tick",
			len(starts), cfg.groups, cfg.lead)
	} else {
		b.rep.Printf("  every group had announced its round %s after the creation began", time.Since(created).Round(100*time.Millisecond))
	}
	return starts, nil
}

// tickReading is what the meter reads around a tick, with the API server's whole scrape for its
// latency histograms.
type tickReading struct {
	reading
	api perfkit.Samples
}

func (b *bench) readTick(ctx context.Context) (tickReading, error) {
	r, err := b.read(ctx)
	if err != nil {
		return tickReading{}, err
	}
	api, err := perfkit.ScrapeAPIServer(ctx, b.env.Clientset)
	return tickReading{reading: r, api: api}, err
}

// explainSpread reports, from the interval's numbers, what limited how fast the groups started:
// the operator's reconcile workers (how busy they were, and how much of a reconcile waited for
// the API server's answers) or the API server (its write rate and its latency).
func (b *bench) explainSpread(start, end tickReading, starts tickStarts) {
	iv := between(start.reading, end.reading)
	apiStart, apiEnd, started := start.api, end.api, len(starts.fromTick)
	if started == 0 || iv.reconciles == 0 {
		return
	}
	secs := iv.elapsed.Seconds()
	w := operatorWrites(iv.api)
	workers := end.op.Sum("controller_runtime_max_concurrent_reconciles", map[string]string{"controller": "oaatgroup"})
	// The groups are idle before the tick: the workers' busy share is that of the time from the
	// tick to the last start.
	active := max(starts.fromTick.Max(), time.Millisecond)
	busy := iv.reconciles * iv.reconcileTime.Seconds() / (workers * active.Seconds())
	b.rep.Printf("  over the %s from 1 s before the tick to the last start: %.0f reconciles (%.2f per started group), mean %s each, mean work queue wait %s; %.0f workers, busy %.0f %% of the %s from the tick to the last start",
		iv.elapsed.Round(time.Millisecond), iv.reconciles, iv.reconciles/float64(started), iv.reconcileTime.Round(time.Microsecond),
		iv.queueWait.Round(time.Millisecond), workers, 100*busy, active.Round(time.Millisecond))
	b.rep.Printf("  operator writes: %.0f (%.2f per started group: %s; events are sent later, in the background), %.0f/s; all write requests the API server took: %.0f/s",
		w.total(), w.total()/float64(started), w.perRun(started), w.total()/secs, iv.api.Count(perfkit.RequestKey.Write)/secs)
	// The requests a reconcile waits for: reads and writes of the operator's kinds (the pods'
	// binding and status are the scheduler's and kwok's; events are sent by a background
	// recorder; watches do not end).
	operatorKind := func(k perfkit.RequestKey) bool {
		switch k.Resource {
		case "oaatgroups", "oaatlocks", "oaattypes", "leases":
		case "pods":
			if k.Subresource != "" {
				return false
			}
		default:
			return false
		}
		return !k.Failed && k.Verb != "WATCH"
	}
	var inAPI float64
	var latencies []string
	var keys []perfkit.RequestKey
	for k := range iv.api {
		if operatorKind(k) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return iv.api[keys[i]] > iv.api[keys[j]] })
	for _, k := range keys {
		match := map[string]string{"verb": k.Verb, "group": k.Group, "resource": k.Resource, "subresource": k.Subresource}
		n := apiEnd.Sum("apiserver_request_duration_seconds_count", match) - apiStart.Sum("apiserver_request_duration_seconds_count", match)
		sum := apiEnd.Sum("apiserver_request_duration_seconds_sum", match) - apiStart.Sum("apiserver_request_duration_seconds_sum", match)
		if n == 0 {
			continue
		}
		inAPI += sum
		latencies = append(latencies, fmt.Sprintf("%s %.0f x mean %s", k, n, mean(sum, n).Round(100*time.Microsecond)))
	}
	apfN := apiEnd.Sum("apiserver_flowcontrol_request_wait_duration_seconds_count", nil) - apiStart.Sum("apiserver_flowcontrol_request_wait_duration_seconds_count", nil)
	apfSum := apiEnd.Sum("apiserver_flowcontrol_request_wait_duration_seconds_sum", nil) - apiStart.Sum("apiserver_flowcontrol_request_wait_duration_seconds_sum", nil)
	b.rep.Printf("  the API server's time for the requests of the operator's kinds (groups, locks, types, pods, leases; no watch): %s; mean wait in its priority and fairness queues %s (all requests)",
		strings.Join(latencies, ", "), mean(apfSum, apfN).Round(100*time.Microsecond))
	perReconcile := time.Duration(inAPI / iv.reconciles * float64(time.Second))
	cpuPerReconcile := time.Duration(float64(iv.cpu) / iv.reconciles)
	load, _ := os.ReadFile("/proc/loadavg")
	loadNow := strings.Fields(string(load) + " ?")[0]
	b.rep.Printf("  manager CPU %.2f cores (%s per reconcile) of the machine's %d, shared with the API server, etcd, the scheduler, kwok and whatever else runs; load average at the last start %s",
		iv.cpu.Seconds()/secs, cpuPerReconcile.Round(100*time.Microsecond), runtime.NumCPU(), loadNow)
	workTime := time.Duration(iv.reconciles * iv.reconcileTime.Seconds() / workers * float64(time.Second))
	switch {
	case busy >= 0.8:
		share := func(d time.Duration) string {
			return fmt.Sprintf("%s (%.0f %%)", d.Round(100*time.Microsecond), 100*d.Seconds()/iv.reconcileTime.Seconds())
		}
		b.rep.Printf("  limit: the operator's reconcile workers: the burst's %.0f reconciles of %s each are %s of work for each of %.0f workers, against a spread of %s. Of a reconcile, %s is the API server's time for its requests, %s the manager's CPU, and the other %s waiting elsewhere: for a CPU (load average %s on %d cores), on the connection, in the client",
			iv.reconciles, iv.reconcileTime.Round(time.Microsecond), workTime.Round(time.Millisecond), workers,
			perfkit.Ms(starts.spread()), share(perReconcile), share(cpuPerReconcile), share(iv.reconcileTime-perReconcile-cpuPerReconcile),
			loadNow, runtime.NumCPU())
	default:
		b.rep.Printf("  limit: not the reconcile workers (busy %.0f %%, %s of work each): a start came p50 %s after its round start, against a mean work queue wait of %s and a mean reconcile of %s",
			100*busy, workTime.Round(time.Millisecond), perfkit.Ms(starts.fromRound.Percentile(50)),
			iv.queueWait.Round(time.Millisecond), iv.reconcileTime.Round(time.Microsecond))
	}
}
