package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// runKey names a series of oaat_item_runs_total.
type runKey struct{ group, item, result string }

// checkMetrics compares, over a window without faults, the leader's oaat_item_runs_total with
// the pods that finished. Counters start at zero in each process, and a SIGKILLed replica's last
// increments are never scraped, so the totals over the whole chaos run cannot be reconciled;
// instead the groups are drained (frequency and failureCoolOff 1h: no new run once every item has
// run) so that no run is in progress, the leader's counters are read, the groups run for the
// settle window, are drained again, and the leader's counters are read again. Their increase must
// equal, per group, item and result, the pods created in between, now ended.
func (c *chaos) checkMetrics(ctx context.Context) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Metrics against finished pods, over a %s window without faults", c.cfg.settle)
	if err := c.drain(ctx); err != nil {
		return "", err
	}
	leader, err := c.replicas.waitLeader(ctx, time.Minute)
	if err != nil {
		return "", err
	}
	pid := leader.PID()
	before, err := runTotals(ctx, leader)
	if err != nil {
		return "", err
	}
	from := time.Now()
	if err := c.setSchedule(ctx, "10s", ""); err != nil {
		return "", err
	}
	if err := perfkit.Sleep(ctx, c.cfg.settle); err != nil {
		return "", err
	}
	if err := c.drain(ctx); err != nil {
		return "", err
	}
	if now := c.replicas.leader(ctx); now != leader || leader.PID() != pid {
		fmt.Fprintf(&b, "\n  not checked: the leader changed during the window")
		return b.String(), nil
	}
	after, err := runTotals(ctx, leader)
	if err != nil {
		return "", err
	}
	finished := map[runKey]float64{}
	for _, p := range c.observer.pods.Pods(namespace) {
		if p.SeenCreated.After(from) && !p.Live() {
			result := "failed" // the values of the result label (README, Metrics)
			if p.Phase == corev1.PodSucceeded {
				result = "succeeded"
			}
			finished[runKey{p.Group, p.Item, result}]++
		}
	}
	var counted, pods float64
	var differ []string
	keys := map[runKey]bool{}
	for k := range finished {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	for k := range keys {
		n := after[k] - before[k]
		counted += n
		pods += finished[k]
		if n != finished[k] {
			differ = append(differ, fmt.Sprintf("%s/%s %s: counter +%.0f, pods %.0f", k.group, k.item, k.result, n, finished[k]))
		}
	}
	sort.Strings(differ)
	fmt.Fprintf(&b, "\n  leader %s (pid %d): oaat_item_runs_total increased by %.0f; pods finished: %.0f; series that differ: %d",
		leader.Name, pid, counted, pods, len(differ))
	for _, d := range differ {
		fmt.Fprintf(&b, "\n    %s", d)
	}
	return b.String(), nil
}

// runTotals reads oaat_item_runs_total of the replica by group, item and result.
func runTotals(ctx context.Context, m *perfkit.Manager) (map[runKey]float64, error) {
	samples, err := m.Metrics(ctx)
	if err != nil {
		return nil, err
	}
	out := map[runKey]float64{}
	for _, s := range samples {
		if s.Name == "oaat_item_runs_total" && s.Labels["namespace"] == namespace {
			out[runKey{s.Labels["group"], s.Labels["item"], s.Labels["result"]}] += s.Value
		}
	}
	return out, nil
}

// drain stops new runs (frequency and failureCoolOff 1h) and waits until no group has a run in
// progress or an item that never ran and may, in any namespace of the run: every item that had
// run waits an hour, and one that never ran runs once (a group waiting on a lock slot may start
// it after every group was seen without a run).
func (c *chaos) drain(ctx context.Context) error {
	if err := c.setSchedule(ctx, "1h", "1h"); err != nil {
		return err
	}
	// busy names what still runs or may: "" once nothing does.
	busy := func() (string, error) {
		for _, ns := range c.namespaces() {
			groups := &v1alpha1.OaatGroupList{}
			if err := c.env.Client.List(ctx, groups, client.InNamespace(ns)); err != nil {
				return "", err
			}
			for _, g := range groups.Items {
				if g.Status.CurrentRun != nil {
					return "the run of group " + ns + "/" + g.Name, nil
				}
				if neverRan(&g) {
					return "an item of group " + ns + "/" + g.Name + " that never ran", nil
				}
			}
		}
		for _, p := range c.allPods() {
			if p.Live() {
				return "pod " + p.Name, nil
			}
		}
		return "", nil
	}
	var left string
	// Every item that never ran goes through the locks of capacity 1 one at a time: minutes.
	deadline := time.Now().Add(drainTimeout)
	for time.Now().Before(deadline) {
		var err error
		if left, err = busy(); err != nil || left == "" {
			return err
		}
		if err := perfkit.Sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("groups still run %s after they were drained: %s", drainTimeout, left)
}

// setSchedule sets every group's frequency and failureCoolOff (empty: none), in every namespace of
// the run.
func (c *chaos) setSchedule(ctx context.Context, frequency, coolOff string) error {
	for _, group := range c.plan {
		key := group.key()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			g := &v1alpha1.OaatGroup{}
			if err := c.env.Client.Get(ctx, key, g); err != nil {
				return err
			}
			g.Spec.Frequency, g.Spec.FailureCoolOff = v1alpha1.Duration(frequency), v1alpha1.Duration(coolOff)
			return c.env.Client.Update(ctx, g)
		})
		if err != nil {
			return fmt.Errorf("setting the schedule of %s: %w", key, err)
		}
	}
	return nil
}

// neverRan reports whether an item of the group that never ran is due or waits for a lock slot:
// it runs once, however long the drain's frequency (suspended, removed or parked items do not).
func neverRan(g *v1alpha1.OaatGroup) bool {
	for _, it := range g.Status.Items {
		if it.LastSuccess == nil && it.LastFailure == nil && (it.WaitReason == "" || it.WaitReason == v1alpha1.WaitLockHeld) {
			return true
		}
	}
	return false
}

// drainTimeout bounds a drain: the items that never ran, of up to all the groups, each wait
// their turn at a lock of capacity 1.
const drainTimeout = 8 * time.Minute
