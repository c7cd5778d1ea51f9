package main

import (
	"fmt"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// issue31Results are the numbers of issue 31's targets that the scale and handoff phases measure
// (the curve's and the tick's are in results and results15).
type issue31Results struct {
	// reconcile is the mean reconcile of the scale window; reads and writes are the operator's
	// client's requests per finished run there.
	reconcile     time.Duration
	reads, writes float64
	// heldRSS is the manager's RSS holding every group and the last pod of each item (fill).
	heldRSS int64
	// handOffGrowth is how the reconciles per hand-off grew from the fewest waiting groups to the
	// most (handOffGrowth), zero when not measured.
	handOffGrowth float64
}

// issue31Summary prints what the phases that ran measured against issue 31's targets.
func (b *bench) issue31Summary() {
	r, r31 := b.results, b.results31
	b.rep.Printf("\n## Targets of issue 31 (the cost per run)")
	row := func(name string, measured bool, met bool, value string) {
		verdict := "met"
		switch {
		case !measured:
			verdict, value = "-", "not measured"
		case !met:
			verdict = "MISSED"
		}
		b.rep.Printf("  %-52s %-7s %s", name, verdict, value)
	}
	scale := b.runs(phaseScale)
	row("operator requests per run (scale), to halve", scale && r31.reads+r31.writes > 0, false,
		fmt.Sprintf("%.2f = %.2f reads + %.2f writes (docs/performance.md: what each is for)", r31.reads+r31.writes, r31.reads, r31.writes))
	row("mean reconcile under the scale load <= 40 ms", scale, r31.reconcile <= 40*time.Millisecond, r31.reconcile.Round(100*time.Microsecond).String())
	row("reaction p99 under the scale load <= 3 s", scale && len(r.scaleReaction) > 0,
		len(r.scaleReaction) > 0 && r.scaleReaction.Percentile(99) <= 3*time.Second, r.scaleReaction.Summary())
	if ticks := b.results15.ticks; len(ticks) > 0 {
		t := ticks[0]
		last := t.starts.fromTick.Max()
		row(fmt.Sprintf("tick of %d groups started within 1.2x the floor", b.cfg15.tick.groups), t.floor > 0,
			float64(last) <= 1.2*float64(t.floor), fmt.Sprintf("last start %s, floor %s: %s", perfkit.Ms(last), perfkit.Ms(t.floor), ratio(float64(last), float64(t.floor))))
	} else {
		row("tick started within 1.2x the floor", false, false, "")
	}
	row(fmt.Sprintf("RSS <= 150 MiB holding %d groups x %d items", b.cfg.groups, b.cfg.items), r31.heldRSS > 0,
		r31.heldRSS <= 150<<20 && r.peakRSS <= 150<<20, fmt.Sprintf("%s held, peak %s (over the scale phase: window, restart and fill)", perfkit.MiB(r31.heldRSS), perfkit.MiB(r.peakRSS)))
	rss := func(p curvePoint) int64 { return p.rss }
	slope, r2 := curveFit(r.curve, rss)
	row("scale curve: RSS per group measured, R² >= 0.98", len(r.curve) > 1, r2 >= 0.98,
		fmt.Sprintf("%.1f KiB per group of %d items, R² %.3f, over %s groups", slope/(1<<10), b.cfg.curveItems, r2, joinInts(groupsOf(r.curve))))
	row(fmt.Sprintf("hand-off: O(1) reconciles (<= %.0fx, fewest to most)", flatHandOff), r31.handOffGrowth > 0,
		r31.handOffGrowth <= flatHandOff, fmt.Sprintf("%.2fx", r31.handOffGrowth))
}
