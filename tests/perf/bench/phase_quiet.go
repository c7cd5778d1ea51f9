package main

import (
	"context"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// quietPhase is the latency phase's workload (small groups whose items repeat) with
// spec.runEvents: Failures, which sends no event for a successful run: the operator's writes per
// repeating run with that option (target <= 3).
func (b *bench) quietPhase(ctx context.Context) error {
	cfg := b.cfg
	const ns = "bench-quiet"
	b.rep.Printf("\n## Repeating runs without success events (spec.runEvents: Failures): %d groups x %d items, runs of %s, frequency %s, for %s",
		cfg.latencyGroups, cfg.latencyItems, cfg.latencyRun, cfg.latencyFreq, cfg.latencyWindow)
	if err := b.env.Namespace(ctx, ns); err != nil {
		return err
	}
	iv, in, err := b.measure(ctx, cfg.latencyWindow, func() error {
		objs := []client.Object{perfkit.NewOaatType(ns, "bench", perfkit.PodTemplate(cfg.latencyRun.String(), "0"))}
		for i := range cfg.latencyGroups {
			g := perfkit.NewGroup(ns, "g-"+strconv.Itoa(i), "bench", cfg.latencyFreq.String(), perfkit.Items(cfg.latencyItems))
			g.Spec.RunEvents = v1alpha1.RunEventsFailures
			objs = append(objs, g)
		}
		return perfkit.CreateAll(ctx, b.env.Client, objs)
	})
	if err != nil {
		return err
	}
	runs := endedIn(b.pods.Pods(ns), in)
	b.rep.Printf("  finished runs: %d; the target for this option is <= 3 writes per run", runs)
	b.results.quietWritesPerRun, _ = b.reportOperatorWrites(iv, runs)
	return b.deleteNamespace(ctx, ns)
}
