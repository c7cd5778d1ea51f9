package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// latencyPhase runs a few small groups whose items repeat, on the otherwise idle operator: each
// group runs its items back to back (reaction), then idles until the first becomes eligible again
// (precision), and so on for the window.
func (b *bench) latencyPhase(ctx context.Context) error {
	cfg := b.cfg
	const ns = "bench-latency"
	b.rep.Printf("\n## Reaction and precision: %d groups x %d items, runs of %s, frequency %s, for %s",
		cfg.latencyGroups, cfg.latencyItems, cfg.latencyRun, cfg.latencyFreq, cfg.latencyWindow)
	if err := b.env.Namespace(ctx, ns); err != nil {
		return err
	}
	iv, in, err := b.measure(ctx, cfg.latencyWindow, func() error {
		return b.createGroups(ctx, ns, cfg.latencyGroups, cfg.latencyItems, cfg.latencyRun, cfg.latencyFreq)
	})
	if err != nil {
		return err
	}
	pods := b.pods.Pods(ns)
	runs := endedIn(pods, in)
	t := measureStarts(perfkit.ByGroup(pods), cfg.latencyFreq, in)
	b.results.reaction, b.results.precision = t.reaction, t.precision
	for _, e := range t.early {
		b.findingf("started while not due: %s", e)
	}
	b.rep.Printf("  finished runs: %d", runs)
	b.rep.Printf("  reaction (a pod's end to the group's next pod, target p99 < 1 s): %s", t.reaction.Summary())
	b.rep.Printf("  precision (an item's eligibility to its pod, target p99 < 1 s): %s", t.precision.Summary())
	b.results.latencyWritesPerRun, b.results.latencyTotal = b.reportOperatorWrites(iv, runs)
	b.describeManager(iv)
	return b.deleteNamespace(ctx, ns)
}

// createGroups creates an OaatType whose pods run for run and succeed, and groups g-0 to
// g-<groups-1>, each with as many items as the items argument, changed by mutate if given.
func (b *bench) createGroups(ctx context.Context, ns string, groups, items int, run, frequency time.Duration, mutate ...func(*v1alpha1.OaatGroup)) error {
	objs := []client.Object{perfkit.NewOaatType(ns, "bench", perfkit.PodTemplate(run.String(), "0"))}
	for i := range groups {
		g := perfkit.NewGroup(ns, "g-"+strconv.Itoa(i), "bench", frequency.String(), perfkit.Items(items))
		for _, m := range mutate {
			m(g)
		}
		objs = append(objs, g)
	}
	return perfkit.CreateAll(ctx, b.env.Client, objs)
}

// measure reads the meters, calls during unless it is nil, waits d, and reads them again.
func (b *bench) measure(ctx context.Context, d time.Duration, during func() error) (interval, window, error) {
	start, err := b.read(ctx)
	if err != nil {
		return interval{}, window{}, err
	}
	if during != nil {
		if err := during(); err != nil {
			return interval{}, window{}, err
		}
	}
	if err := perfkit.Sleep(ctx, d); err != nil {
		return interval{}, window{}, err
	}
	end, err := b.read(ctx)
	if err != nil {
		return interval{}, window{}, err
	}
	return between(start, end), window{from: start.at, to: end.at}, nil
}

// deleteNamespace deletes a phase's namespace and waits until it is gone, so that its garbage
// collection is not counted in the next phase.
func (b *bench) deleteNamespace(ctx context.Context, ns string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := b.env.Client.Delete(ctx, obj); err != nil {
		return err
	}
	gone := perfkit.WaitFor(ctx, 10*time.Minute, func() bool {
		err := b.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err)
	})
	if !gone {
		return fmt.Errorf("namespace %s still exists 10 minutes after its deletion", ns)
	}
	return nil
}
