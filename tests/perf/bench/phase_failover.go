package main

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

const failoverNamespace = "bench-failover"

// failoverPhase replaces the manager by two replicas with leader election, with a few small
// groups that always have an item due, and measures two failovers: the leader SIGKILLed (its
// Lease expires, 15 s), then, with the killed replica back as a warm standby, the leader stopped
// with SIGTERM (it releases its Lease). Each is timed from the signal to the first item pod
// created after the other replica reported itself leader; a pod created after that instant
// is the new leader's, since a leader that releases its Lease has stopped its controllers first.
// The manager without leader election is started again at the end.
func (b *bench) failoverPhase(ctx context.Context) error {
	cfg := b.cfg
	b.rep.Printf("\n## Failover: two replicas with leader election (Lease 15 s), %d groups x 3 items of 1s runs, frequency 5s; the other %d groups idle",
		cfg.failoverGroups, cfg.groups)
	if err := b.manager.Stop(); err != nil {
		return err
	}
	replicas := []*perfkit.Manager{perfkit.NewManager(b.env, "bench-a", true), perfkit.NewManager(b.env, "bench-b", true)}
	defer func() {
		for _, m := range replicas {
			if err := m.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "bench: stopping", m.Name+":", err)
			}
		}
	}()
	for _, m := range replicas {
		if err := m.Start(); err != nil {
			return err
		}
	}
	if err := b.env.Namespace(ctx, failoverNamespace); err != nil {
		return err
	}
	if err := b.createGroups(ctx, failoverNamespace, cfg.failoverGroups, 3, time.Second, 5*time.Second); err != nil {
		return err
	}
	for _, how := range []struct {
		name         string
		signal       syscall.Signal
		result, lead *time.Duration
	}{
		{"SIGKILL (the Lease expires)", syscall.SIGKILL, &b.results.failoverKill, &b.results.failoverKillLead},
		{"SIGTERM (the Lease released)", syscall.SIGTERM, &b.results.failoverStop, new(time.Duration)},
	} {
		// Both replicas run long enough for the standby's caches to have synced.
		if err := perfkit.Sleep(ctx, cfg.failoverSettle); err != nil {
			return err
		}
		took, lead, detail, err := b.failover(ctx, replicas, how.signal)
		if err != nil {
			return err
		}
		*how.result, *how.lead = took, lead
		b.rep.Printf("  %s: %s", how.name, detail)
	}
	b.results.failoverMeasured = true
	for _, m := range replicas {
		if err := m.Stop(); err != nil {
			return err
		}
	}
	// The bench's manager runs again before the namespace goes: its groups and their pods carry
	// the operator's finalizers (oaat.io/history, oaat.io/run-tracking), which only a running
	// manager removes.
	if err := b.manager.Start(); err != nil {
		return err
	}
	if err := b.manager.WaitReady(ctx, time.Minute); err != nil {
		return err
	}
	return b.deleteNamespace(ctx, failoverNamespace)
}

// failover signals the leader of replicas, waits until the other reports itself leader and
// creates an item pod, then starts the signalled one again (a standby). It returns the time from
// the signal to that pod and until the other replica led (seen on its metrics), and a
// description.
func (b *bench) failover(ctx context.Context, replicas []*perfkit.Manager, signal syscall.Signal) (time.Duration, time.Duration, string, error) {
	var old, next *perfkit.Manager
	if !perfkit.WaitFor(ctx, time.Minute, func() bool { old = leaderOf(ctx, replicas); return old != nil }) {
		return 0, 0, "", fmt.Errorf("no replica leads")
	}
	for _, m := range replicas {
		if m != old {
			next = m
		}
	}
	signalled := time.Now()
	var err error
	if signal == syscall.SIGKILL {
		err = old.Kill()
	} else {
		err = old.Stop()
	}
	if err != nil {
		return 0, 0, "", err
	}
	if !perfkit.WaitFor(ctx, time.Minute, func() bool { return leaderOf(ctx, []*perfkit.Manager{next}) == next }) {
		return 0, 0, "", fmt.Errorf("%s did not take the Lease within a minute of %s", next.Name, signal)
	}
	leading := time.Since(signalled)
	var first time.Time
	if !perfkit.WaitFor(ctx, time.Minute, func() bool {
		for _, p := range b.pods.Pods(failoverNamespace) {
			if p.SeenCreated.After(signalled.Add(leading)) && (first.IsZero() || p.SeenCreated.Before(first)) {
				first = p.SeenCreated
			}
		}
		return !first.IsZero()
	}) {
		return 0, 0, "", fmt.Errorf("%s created no pod within a minute of leading", next.Name)
	}
	if err := old.Start(); err != nil {
		return 0, 0, "", err
	}
	took := first.Sub(signalled)
	return took, leading, fmt.Sprintf("%s leads %s after the signal; its first item pod %s after it", next.Name,
		perfkit.Ms(leading), perfkit.Ms(took)), nil
}

// leaderOf returns the replica that reports itself leader, nil if none does.
func leaderOf(ctx context.Context, replicas []*perfkit.Manager) *perfkit.Manager {
	for _, m := range replicas {
		if !m.Running() {
			continue
		}
		samples, err := m.Metrics(ctx)
		if err == nil && samples.Sum("leader_election_master_status", map[string]string{"name": v1alpha1.LeaderElectionID}) == 1 {
			return m
		}
	}
	return nil
}
