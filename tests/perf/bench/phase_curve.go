package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

const curveNamespace = "bench-curve"

// curvePoint is what one step of the scale curve measured: the fill of its new groups (every
// item run once), then, after a restart, what the manager holds.
type curvePoint struct {
	groups, runs, podsHeld int
	rss, heap, live        int64
	// cpu and fill are the manager's CPU time and the time the step's new groups took to run each
	// of their items once; runs are those runs. drained is the time from the restart until the
	// work queue had drained every group's first pass.
	cpu, fill, drained time.Duration
}

// curvePhase runs the same benchmark at growing numbers of groups (BENCH_SCALE, cumulative: each
// step adds groups to those of the step before, in their own namespace, BENCH_SCALE_ITEMS items
// each, due once within the phase: BENCH_SCALE_FREQUENCY). Each step reaches the steady state
// first, every item of every group run once and no pod live, so that every step holds what it
// holds for good: each group and the last pod of each item. Then the manager is restarted (its
// memory is what it holds, not the peak of the fill), its work queue drains the initial pass of
// every group (waitDrained), a collection and BENCH_SCALE_SETTLE follow, and its memory is read. Memory per
// group and CPU per run are the slopes of least-squares lines through the steps. The scale phase's
// groups stay, idle, with all their pods: they are part of the intercept. The curve's own groups
// are deleted at the end.
func (b *bench) curvePhase(ctx context.Context) error {
	cfg := b.cfg
	if len(cfg.curve) == 0 {
		return nil
	}
	b.rep.Printf("\n## Scale curve: %s groups x %d items, runs of %s, frequency %s; each step filled (every item run once), then a restart; once the work queue drained every group's first pass, a collection and %s to settle before memory is read",
		joinInts(cfg.curve), cfg.curveItems, cfg.scaleRun, cfg.curveFreq, cfg.curveSettle)
	if err := b.env.Namespace(ctx, curveNamespace); err != nil {
		return err
	}
	if err := perfkit.CreateAll(ctx, b.env.Client, []client.Object{
		perfkit.NewOaatType(curveNamespace, "bench", perfkit.PodTemplate(cfg.scaleRun.String(), "0")),
	}); err != nil {
		return err
	}
	created := 0
	b.rep.Printf("  %7s %9s %9s %9s %12s %9s %8s %11s %8s", "groups", "RSS", "Go heap", "live heap", "pods held", "fill", "runs/s", "CPU/run", "drained")
	for _, n := range cfg.curve {
		if n <= created {
			continue
		}
		var objs []client.Object
		for i := created; i < n; i++ {
			objs = append(objs, perfkit.NewGroup(curveNamespace, "g-"+strconv.Itoa(i), "bench", cfg.curveFreq.String(), perfkit.Items(cfg.curveItems)))
		}
		p, err := b.curveStep(ctx, n, (n-created)*cfg.curveItems, objs)
		if err != nil {
			return err
		}
		created = n
		b.results.curve = append(b.results.curve, p)
		b.rep.Printf("  %7d %9s %9s %9s %5d (%4.1f/g) %9s %8.1f %9.1fms %8s", p.groups, perfkit.MiB(p.rss), perfkit.MiB(p.heap), perfkit.MiB(p.live),
			p.podsHeld, float64(p.podsHeld)/float64(p.groups), p.fill.Round(time.Second), float64(p.runs)/p.fill.Seconds(), perMs(p.cpu, p.runs),
			p.drained.Round(time.Second))
	}
	b.reportCurve(b.results.curve)
	// The curve's groups go before the next phases: 50,000 items of 5,000 groups, even idle, are
	// periodic work and memory that the later phases would measure.
	return b.deleteNamespace(ctx, curveNamespace)
}

// curveStep creates the step's new groups and waits until every item of the curve has run once
// (runs new runs, at most BENCH_FILL_TIMEOUT), measuring the manager's CPU over that fill; then
// restarts the manager, waits until its work queue has drained, collects its garbage, lets it
// settle and reads its memory.
func (b *bench) curveStep(ctx context.Context, groups, runs int, objs []client.Object) (curvePoint, error) {
	cfg := b.cfg
	p := curvePoint{groups: groups, runs: runs}
	before, err := b.manager.Usage()
	if err != nil {
		return p, err
	}
	started := time.Now()
	if err := perfkit.CreateAll(ctx, b.env.Client, objs); err != nil {
		return p, err
	}
	want := groups * cfg.curveItems
	if !perfkit.WaitFor(ctx, cfg.fillTimeout, func() bool {
		pods := b.pods.Pods(curveNamespace)
		return len(pods) >= want && countLive(pods) == 0
	}) {
		pods := b.pods.Pods(curveNamespace)
		return p, fmt.Errorf("scale curve at %d groups: %d of %d item pods, %d live, after %s", groups, len(pods), want, countLive(pods), cfg.fillTimeout)
	}
	p.fill = time.Since(started)
	after, err := b.manager.Usage()
	if err != nil {
		return p, err
	}
	p.cpu = after.CPU - before.CPU
	if err := b.manager.Stop(); err != nil {
		return p, err
	}
	if err := b.manager.Start(); err != nil {
		return p, err
	}
	if err := b.manager.WaitReady(ctx, time.Minute); err != nil {
		return p, err
	}
	if p.drained, err = b.waitDrained(ctx, cfg.curveDrain); err != nil {
		return p, err
	}
	// The drain's garbage is collected first, then the runtime is given the settle time to return
	// to the system the pages its heap no longer needs (its scavenger keeps about a tenth above the
	// next collection's goal): RSS and the heap in use are then what the manager holds, not what
	// the initial pass left behind.
	if p.live, err = b.manager.LiveHeap(ctx); err != nil {
		return p, err
	}
	if err := perfkit.Sleep(ctx, cfg.curveSettle); err != nil {
		return p, err
	}
	usage, err := b.manager.Usage()
	if err != nil {
		return p, err
	}
	samples, err := b.manager.Metrics(ctx)
	if err != nil {
		return p, err
	}
	p.rss, p.heap = usage.RSS, int64(samples.Sum("go_memstats_heap_inuse_bytes", nil))
	for _, pod := range b.pods.Pods(curveNamespace) {
		if !pod.Deleted {
			p.podsHeld++
		}
	}
	return p, nil
}

// reportCurve prints the slopes: memory per group (RSS and Go heap) against groups, CPU time
// against finished runs, each a least-squares line through the steps, and each step's marginal
// slope from the step before, where a change in slope shows where growth stops being linear.
func (b *bench) reportCurve(points []curvePoint) {
	if len(points) < 2 {
		b.rep.Printf("  one step only: no slope")
		return
	}
	var groups, rss, heap, live, runs, cpu []float64
	var allRuns, allCPU float64
	for _, p := range points {
		groups = append(groups, float64(p.groups))
		rss = append(rss, float64(p.rss))
		heap = append(heap, float64(p.heap))
		live = append(live, float64(p.live))
		allRuns, allCPU = allRuns+float64(p.runs), allCPU+p.cpu.Seconds()
		runs, cpu = append(runs, allRuns), append(cpu, allCPU)
	}
	line := func(what string, x, y []float64, unit float64, unitName, per string) {
		slope, intercept, r2 := leastSquares(x, y)
		var marginal []string
		for i := 1; i < len(x); i++ {
			if x[i] != x[i-1] {
				marginal = append(marginal, fmt.Sprintf("%.1f", (y[i]-y[i-1])/(x[i]-x[i-1])/unit))
			}
		}
		b.rep.Printf("  %s: %.1f %s per %s (least squares, R² %.3f, intercept %.1f %s); step by step: %s",
			what, slope/unit, unitName, per, r2, intercept/unit, unitName, strings.Join(marginal, ", "))
	}
	line("RSS", groups, rss, 1<<10, "KiB", "group")
	line("Go heap in use", groups, heap, 1<<10, "KiB", "group")
	line("live heap (after a collection)", groups, live, 1<<10, "KiB", "group")
	line("manager CPU over the fills (cumulative)", runs, cpu, 1e-3, "ms", "run")
}

// leastSquares fits y = slope*x + intercept; r2 is the coefficient of determination.
func leastSquares(x, y []float64) (slope, intercept, r2 float64) {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, sy / n, 0
	}
	slope = (n*sxy - sx*sy) / den
	intercept = (sy - slope*sx) / n
	var ssRes, ssTot float64
	for i := range x {
		d := y[i] - (slope*x[i] + intercept)
		ssRes += d * d
		m := y[i] - sy/n
		ssTot += m * m
	}
	if ssTot == 0 {
		return slope, intercept, 1
	}
	return slope, intercept, 1 - ssRes/ssTot
}

func perMs(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000 / float64(n)
}

// largestStep is the most groups a step of the curve adds.
func largestStep(steps []int) int {
	largest, before := 0, 0
	for _, n := range steps {
		largest, before = max(largest, n-before), max(before, n)
	}
	return largest
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// waitDrained waits, at most timeout, until the manager started last has reconciled at least as
// many groups as the cluster holds and its group work queue is empty with no worker busy: the
// initial pass over every group, which a restart enqueues at once, is over, and what the manager
// holds then is what it keeps. It returns the time since the manager's start.
func (b *bench) waitDrained(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	groups := &v1alpha1.OaatGroupList{}
	if err := b.env.Client.List(ctx, groups); err != nil {
		return 0, err
	}
	var reconciles, depth, active float64
	if !perfkit.WaitFor(ctx, timeout, func() bool {
		samples, err := b.manager.Metrics(ctx)
		if err != nil {
			return false
		}
		reconciles = samples.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "oaatgroup"})
		depth = samples.Sum("workqueue_depth", map[string]string{"name": "oaatgroup"})
		active = samples.Sum("controller_runtime_active_workers", map[string]string{"controller": "oaatgroup"})
		return reconciles >= float64(len(groups.Items)) && depth == 0 && active == 0
	}) {
		return 0, fmt.Errorf("scale curve: the manager's group work queue not drained %s after its start: %.0f reconciles of %d groups, %.0f queued, %.0f workers busy",
			timeout, reconciles, len(groups.Items), depth, active)
	}
	return time.Since(b.manager.StartedAt()), nil
}
