package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

const curveNamespace = "bench-curve"

// curvePoint is what one step of the scale curve measured.
type curvePoint struct {
	groups, runs, podsHeld int
	rss, heap, live        int64
	cpu, elapsed           time.Duration
	reaction               perfkit.Latencies
}

// curvePhase runs the same benchmark at growing numbers of groups (BENCH_SCALE, cumulative: each
// step adds groups to those of the step before, in their own namespace): at each step the manager
// is restarted (so that its memory is what it holds, not a peak of the step before), warms up,
// then the window is measured. Memory per group and CPU per run are the slopes of a least-squares
// line through the steps. The scale phase's groups stay, idle, with all their pods: they are part
// of the intercept. The curve's own groups are deleted at the end.
func (b *bench) curvePhase(ctx context.Context) error {
	cfg := b.cfg
	if len(cfg.curve) == 0 {
		return nil
	}
	b.rep.Printf("\n## Scale curve: %s groups x %d items, runs of %s, frequency %s; at each step a restart, %s warm-up, %s measured",
		joinInts(cfg.curve), cfg.items, cfg.scaleRun, cfg.curveFreq, cfg.curveWarmup, cfg.curveWindow)
	if err := b.env.Namespace(ctx, curveNamespace); err != nil {
		return err
	}
	if err := perfkit.CreateAll(ctx, b.env.Client, []client.Object{
		perfkit.NewOaatType(curveNamespace, "bench", perfkit.PodTemplate(cfg.scaleRun.String(), "0")),
	}); err != nil {
		return err
	}
	created := 0
	b.rep.Printf("  %7s %9s %9s %9s %12s %8s %10s %11s %s", "groups", "RSS", "Go heap", "live heap", "pods held", "runs/s", "CPU", "CPU/run", "reaction")
	for _, n := range cfg.curve {
		if n > created {
			var objs []client.Object
			for i := created; i < n; i++ {
				objs = append(objs, perfkit.NewGroup(curveNamespace, "g-"+strconv.Itoa(i), "bench", cfg.curveFreq.String(), perfkit.Items(cfg.items)))
			}
			if err := perfkit.CreateAll(ctx, b.env.Client, objs); err != nil {
				return err
			}
			created = n
		}
		p, err := b.curveStep(ctx, n)
		if err != nil {
			return err
		}
		b.results.curve = append(b.results.curve, p)
		b.rep.Printf("  %7d %9s %9s %9s %5d (%4.1f/g) %8.1f %9.2fc %9.1fms %s", p.groups, perfkit.MiB(p.rss), perfkit.MiB(p.heap), perfkit.MiB(p.live),
			p.podsHeld, float64(p.podsHeld)/float64(p.groups), float64(p.runs)/p.elapsed.Seconds(),
			p.cpu.Seconds()/p.elapsed.Seconds(), perMs(p.cpu, p.runs), "p50 "+perfkit.Ms(p.reaction.Percentile(50))+", p99 "+perfkit.Ms(p.reaction.Percentile(99)))
	}
	b.reportCurve(b.results.curve)
	// The curve's groups go before the next phases: left running, their runs kept the operator's
	// workers busy (a work queue wait of 86 s in the locks phase that followed, whose groups then
	// finished no run in their window).
	return b.deleteNamespace(ctx, curveNamespace)
}

// curveStep restarts the manager, lets it warm up and measures one window.
func (b *bench) curveStep(ctx context.Context, groups int) (curvePoint, error) {
	cfg := b.cfg
	if err := b.manager.Stop(); err != nil {
		return curvePoint{}, err
	}
	if err := b.manager.Start(); err != nil {
		return curvePoint{}, err
	}
	if err := b.manager.WaitReady(ctx, time.Minute); err != nil {
		return curvePoint{}, err
	}
	if err := perfkit.Sleep(ctx, cfg.curveWarmup); err != nil {
		return curvePoint{}, err
	}
	iv, in, err := b.measure(ctx, cfg.curveWindow, nil)
	if err != nil {
		return curvePoint{}, err
	}
	usage, err := b.manager.Usage()
	if err != nil {
		return curvePoint{}, err
	}
	samples, err := b.manager.Metrics(ctx)
	if err != nil {
		return curvePoint{}, err
	}
	live, err := b.manager.LiveHeap(ctx)
	if err != nil {
		return curvePoint{}, err
	}
	pods := b.pods.Pods(curveNamespace)
	held := 0
	for _, p := range pods {
		if !p.Deleted {
			held++
		}
	}
	return curvePoint{
		groups: groups, runs: endedIn(pods, in), podsHeld: held,
		rss: usage.RSS, heap: int64(samples.Sum("go_memstats_heap_inuse_bytes", nil)), live: live,
		cpu: iv.cpu, elapsed: iv.elapsed,
		reaction: measureStarts(perfkit.ByGroup(pods), cfg.curveFreq, in).reaction,
	}, nil
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
	for _, p := range points {
		groups = append(groups, float64(p.groups))
		rss = append(rss, float64(p.rss))
		heap = append(heap, float64(p.heap))
		live = append(live, float64(p.live))
		runs = append(runs, float64(p.runs))
		cpu = append(cpu, p.cpu.Seconds())
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
	line("manager CPU", runs, cpu, 1e-3, "ms", "finished run")
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

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
