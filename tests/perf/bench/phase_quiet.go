package main

import (
	"context"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// quietPhase is the latency phase's workload (small groups whose items repeat) with
// spec.runEvents: Failures, which sends no event for a successful run: the operator's writes per
// repeating run with that option (target <= 3).
func (b *bench) quietPhase(ctx context.Context) error {
	cfg, ns := b.cfg, "bench-quiet"
	b.rep.Printf("\n## Repeating runs without success events (spec.runEvents: Failures), the latency phase's groups for %s", cfg.latencyWindow)
	if err := b.env.Namespace(ctx, ns); err != nil {
		return err
	}
	iv, in, err := b.measure(ctx, cfg.latencyWindow, func() error {
		return b.createGroups(ctx, ns, cfg.latencyGroups, cfg.latencyItems, cfg.latencyRun, cfg.latencyFreq,
			func(g *v1alpha1.OaatGroup) { g.Spec.RunEvents = v1alpha1.RunEventsFailures })
	})
	if err != nil {
		return err
	}
	runs := endedIn(b.pods.Pods(ns), in)
	b.rep.Printf("  finished runs: %d; the target with this option is <= 3 writes per run", runs)
	b.results.quietWritesPerRun, _ = b.reportOperatorWrites(iv, runs)
	return b.deleteNamespace(ctx, ns)
}
