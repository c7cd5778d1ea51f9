package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// flatHandOff is how much the reconciles per hand-off may grow, from the handoff phase's fewest
// waiting groups to its most, for the cost of a hand-off to count as flat (O(1)): waking every
// group naming the lock would make them grow as the groups do, tenfold at the defaults.
const flatHandOff = 2.0

// handOffRound is what one round of the handoff phase measured.
type handOffRound struct {
	// groups are the round's groups, all naming the lock; waiting those that waited for it when
	// the window began.
	groups, waiting int
	// handOffs are the runs that finished in the window, each a slot handed from one group to
	// the next; reconciles the manager's group reconciles meanwhile, reconcileTime their mean.
	handOffs      int
	reconciles    float64
	reconcileTime time.Duration
	// lockWrites are the successful writes of the lock in the window; gaps the times from a run's
	// end to the creation of the next group's pod, as the benchmark's pod watch saw them.
	lockWrites float64
	gaps       perfkit.Latencies
}

// perHandOff is the round's group reconciles per hand-off.
func (r handOffRound) perHandOff() float64 { return perfkit.PerRun(r.reconciles, r.handOffs) }

// handOffPhase measures what a slot's hand-off costs as the groups waiting for it grow: one round
// for each of BENCH_LOCK_WAITERS (measureHandOff), then the reconciles per hand-off of the round
// with the most groups against those of the round with the fewest.
func (b *bench) handOffPhase(ctx context.Context) error {
	cfg := b.cfg15.locks
	counts := make([]string, len(cfg.waiters))
	for i, n := range cfg.waiters {
		counts[i] = strconv.Itoa(n)
	}
	b.rep.Printf("\n## Lock hand-off: groups of 1 item (runs of %s, frequency 24 h) waiting on one OaatLock of capacity 1, %s groups",
		cfg.run, strings.Join(counts, ", then "))
	rounds := make([]handOffRound, 0, len(cfg.waiters))
	for i, n := range cfg.waiters {
		r, err := b.measureHandOff(ctx, "bench-handoff-"+strconv.Itoa(i), n)
		if err != nil {
			return err
		}
		rounds = append(rounds, r)
	}
	if line, growth, ok := handOffGrowth(rounds); ok {
		b.rep.Printf("\n  %s", line)
		b.results31.handOffGrowth = growth
	}
	return nil
}

// handOffGrowth compares the reconciles per hand-off of the round with the most groups with those
// of the round with the fewest, as a line and a ratio; false when there are not two rounds of
// different sizes that each saw a hand-off.
func handOffGrowth(rounds []handOffRound) (string, float64, bool) {
	measured := slices.DeleteFunc(slices.Clone(rounds), func(r handOffRound) bool { return r.handOffs == 0 })
	if len(measured) < 2 {
		return "", 0, false
	}
	small := slices.MinFunc(measured, func(a, b handOffRound) int { return a.groups - b.groups })
	large := slices.MaxFunc(measured, func(a, b handOffRound) int { return a.groups - b.groups })
	if small.groups == large.groups || small.perHandOff() == 0 {
		return "", 0, false
	}
	growth := large.perHandOff() / small.perHandOff()
	verdict := "flat: O(1) reconciles per hand-off"
	if growth > flatHandOff {
		verdict = "NOT flat: the reconciles per hand-off grow with the waiting groups"
	}
	return fmt.Sprintf("reconciles per hand-off: %.1f with %d groups, %.1f with %d (%.1fx the groups): %.2fx, %s (at most %.0fx counts as flat)",
		small.perHandOff(), small.groups, large.perHandOff(), large.groups, float64(large.groups)/float64(small.groups),
		growth, verdict, flatHandOff), growth, true
}

// measureHandOff measures what a slot's hand-off costs when many groups wait for it: that many
// (groups) of one item name one OaatLock of capacity 1; once every group has been reconciled (all
// but the holder and those whose one run is over wait), the window counts the runs that finished,
// the group reconciles the manager made and the time from each run's end to the next pod. Waking
// every group naming the lock at each hand-off would cost about as many reconciles a run as
// groups wait; waking the holders and the next waiter, a few.
func (b *bench) measureHandOff(ctx context.Context, ns string, groups int) (handOffRound, error) {
	cfg := b.cfg15.locks
	r := handOffRound{groups: groups}
	b.rep.Printf("\n### hand-off: %d groups of 1 item waiting on one lock of capacity 1", groups)
	if err := b.env.Namespace(ctx, ns); err != nil {
		return r, err
	}
	objs := []client.Object{
		perfkit.NewOaatType(ns, "bench", perfkit.PodTemplate(cfg.run.String(), "0")),
		support.Lock(ns, lockName, 1),
	}
	for i := range groups {
		g := perfkit.NewGroup(ns, "g-"+strconv.Itoa(i), "bench", "24h", perfkit.Items(1))
		g.Spec.Locks = []string{lockName}
		objs = append(objs, g)
	}
	created := time.Now()
	if err := perfkit.CreateAll(ctx, b.env.Client, objs); err != nil {
		return r, err
	}
	// Each group runs its one item once (frequency 24 h): once every group has been reconciled,
	// all but the holder and those whose run is over wait.
	var reconciled int
	if !perfkit.WaitFor(ctx, 10*time.Minute, func() bool {
		list := &v1alpha1.OaatGroupList{}
		if err := b.env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false
		}
		reconciled, r.waiting = 0, 0
		for _, g := range list.Items {
			if g.Status.ObservedGeneration > 0 {
				reconciled++
			}
			if g.Status.LockWait != nil {
				r.waiting++
			}
		}
		return reconciled == groups
	}) {
		return r, fmt.Errorf("hand-off: %d of %d groups reconciled after 10 minutes", reconciled, groups)
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
	// that began to wait together come back together a minute later, as many reconciles as
	// groups that no hand-off caused. The window ends before them.
	window := min(cfg.window, time.Until(created.Add(lockRecheck-5*time.Second)))
	if window < 20*time.Second {
		return r, fmt.Errorf("hand-off: the groups took %s to be reconciled and their passes drained, which leaves less than 20 s before their first periodic recheck", time.Since(created).Round(time.Second))
	}
	b.rep.Printf("  every group reconciled %s after their creation, %d of them waiting for the lock; the group work queue at %.0f %s after it; measured for %s, up to 5 s before their first periodic recheck (%s after their first pass)",
		reconciledIn.Round(time.Second), r.waiting, depth, time.Since(created).Round(time.Second), window.Round(time.Second), lockRecheck)
	iv, in, err := b.measure(ctx, window, nil)
	if err != nil {
		return r, err
	}
	pods := b.pods.Pods(ns)
	r.handOffs, r.reconciles, r.reconcileTime = endedIn(pods, in), iv.reconciles, iv.reconcileTime
	r.lockWrites = iv.api.Count(func(k perfkit.RequestKey) bool {
		return k.Resource == "oaatlocks" && k.Write() && !k.Failed
	})
	var overlaps []string
	r.gaps, overlaps = handOffGaps(pods, in)
	for _, o := range overlaps {
		b.findingf("lock %s/%s of capacity 1: %s", ns, lockName, o)
	}
	b.rep.Printf("  finished runs (hand-offs): %d; group reconciles: %.0f, %.1f per hand-off with %d to %d groups waiting (waking every waiting group at each hand-off would cost %d to %d), mean %s each; lock writes per hand-off: %.2f",
		r.handOffs, r.reconciles, r.perHandOff(), max(r.waiting-r.handOffs, 0), r.waiting, max(r.waiting-r.handOffs, 0), r.waiting,
		r.reconcileTime.Round(time.Microsecond), perfkit.PerRun(r.lockWrites, r.handOffs))
	b.rep.Printf("  time per hand-off, from a run's end to the next group's pod (as the benchmark's pod watch saw both): %s; the window over its hand-offs: %s",
		r.gaps.Summary(), perfkit.Ms(time.Duration(float64(iv.elapsed)/float64(max(r.handOffs, 1)))))
	if r.handOffs >= r.waiting {
		b.rep.Printf("  (every waiting group ran within the window: its last hand-offs had fewer groups waiting; more groups than hand-offs in a window make a round's numbers those of a full queue)")
	}
	b.describeManager(iv)
	return r, b.deleteNamespace(ctx, ns)
}

// handOffGaps returns, for each pod created in the window after another pod of the lock's groups,
// the time from that previous pod's end to its creation, as the benchmark's pod watch saw them
// (SeenEnded, SeenCreated); and, as violations of the lock's capacity of 1, the pods created
// while the previous one still lived.
func handOffGaps(pods []perfkit.PodLife, in window) (perfkit.Latencies, []string) {
	sorted := slices.SortedFunc(slices.Values(pods), func(a, b perfkit.PodLife) int { return a.SeenCreated.Compare(b.SeenCreated) })
	var gaps perfkit.Latencies
	var overlaps []string
	for i := 1; i < len(sorted); i++ {
		prev, next := sorted[i-1], sorted[i]
		if !in.holds(next.SeenCreated) {
			continue
		}
		if prev.Live() || prev.SeenEnded.After(next.SeenCreated) {
			overlaps = append(overlaps, fmt.Sprintf("pod %s created while pod %s still ran", next.Name, prev.Name))
			continue
		}
		gaps = append(gaps, next.SeenCreated.Sub(prev.SeenEnded))
	}
	return gaps, overlaps
}
