package main

import (
	"fmt"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// summary prints the operator against the CronJob baseline, then each target of the issue with
// what was measured.
func (b *bench) summary() {
	r := b.results
	b.rep.Printf("\n## CronJob controller / operator")
	b.rep.Printf("  controller writes per run: %.2f / %.2f (scale) = %s; %.2f / %.2f (latency phase, with history pruning) = %s",
		r.cronWritesPerRun, r.scaleWritesPerRun, ratio(r.cronWritesPerRun, r.scaleWritesPerRun),
		r.cronWritesPerRun, r.latencyWritesPerRun, ratio(r.cronWritesPerRun, r.latencyWritesPerRun))
	b.rep.Printf("  all workload writes per run: %.2f / %.2f (scale) = %s; %.2f / %.2f (latency phase) = %s",
		r.cronTotalPerRun, r.scaleTotal, ratio(r.cronTotalPerRun, r.scaleTotal),
		r.cronTotalPerRun, r.latencyTotal, ratio(r.cronTotalPerRun, r.latencyTotal))
	for _, p := range []float64{50, 99} {
		cron, op := r.cronPrecision.Percentile(p), r.precision.Percentile(p)
		b.rep.Printf("  start precision p%.0f: %s / %s = %s", p, perfkit.Ms(cron), perfkit.Ms(op),
			ratio(float64(cron), float64(op)))
	}

	b.rep.Printf("\n## Targets")
	target := func(name string, met bool, measured string) {
		verdict := "met"
		switch {
		case measured == "not measured":
			verdict = "-"
		case !met:
			verdict = "MISSED"
		}
		b.rep.Printf("  %-44s %-7s %s", name, verdict, measured)
	}
	second := time.Second
	target("reaction p99 < 1 s", len(r.reaction) > 0 && r.reaction.Percentile(99) < second, r.reaction.Summary())
	target("precision p99 < 1 s", len(r.precision) > 0 && r.precision.Percentile(99) < second, r.precision.Summary())
	target("RSS < 200 MiB", r.peakRSS < 200<<20, "peak "+perfkit.MiB(r.peakRSS))
	target("<= 4 operator writes per run (scale)", r.scaleWritesPerRun <= 4, fmt.Sprintf("%.2f", r.scaleWritesPerRun))
	target("<= 4 operator writes per run (repeating)", r.latencyWritesPerRun <= 4, fmt.Sprintf("%.2f", r.latencyWritesPerRun))
	resume := "not measured"
	if r.resumed > 0 {
		resume = perfkit.Ms(r.resume)
	}
	target("resume all groups < 10 s", r.resume < 10*second, resume)
	b.resumeTargets(target)
	target("no duplicate pod", len(b.findings) == 0, fmt.Sprintf("%d found", len(b.findings)))
}
