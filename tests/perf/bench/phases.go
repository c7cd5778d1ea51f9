package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// The phases, in the order they run; BENCH_PHASES selects some of them (all by default).
const (
	phaseCronJob  = "cronjob"
	phaseLatency  = "latency"
	phaseScale    = "scale"
	phaseFailover = "failover"
	phaseCurve    = "curve"
	phaseLocks    = "locks"
	phaseHandOff  = "handoff"
	phaseJitter   = "jitter"
)

var allPhases = []string{phaseCronJob, phaseLatency, phaseScale, phaseFailover, phaseCurve, phaseLocks, phaseHandOff, phaseJitter}

// issue8Phases are the phases whose numbers the comparison with the CronJob controller and the
// targets of issue 8 are made of.
var issue8Phases = []string{phaseCronJob, phaseLatency, phaseScale}

// lockConfig holds the knobs of the locks and handoff phases.
type lockConfig struct {
	groups, items, capacity int
	run, frequency, window  time.Duration
	// waiters are the numbers of groups of the handoff phase's rounds, all waiting on one lock
	// of capacity 1, one round per number.
	waiters []int
}

// tickConfig holds the knobs of the jitter phase.
type tickConfig struct {
	groups        int
	run, jitter   time.Duration
	lead, timeout time.Duration
}

// issue15Config holds the phase selection and the knobs of the phases of issue 15.
type issue15Config struct {
	phases map[string]bool
	locks  lockConfig
	tick   tickConfig
}

func readIssue15Config(k *perfkit.Knobs) issue15Config {
	return issue15Config{
		phases: k.Names("BENCH_PHASES", allPhases),
		locks: lockConfig{
			groups:    k.Int("BENCH_LOCK_GROUPS", 10),
			items:     k.Int("BENCH_LOCK_ITEMS", 5),
			capacity:  k.Int("BENCH_LOCK_CAPACITY", 2),
			run:       k.Duration("BENCH_LOCK_RUN", time.Second),
			frequency: k.Duration("BENCH_LOCK_FREQUENCY", 20*time.Second),
			window:    k.Duration("BENCH_LOCK_WINDOW", time.Minute),
			waiters:   k.Ints("BENCH_LOCK_WAITERS", []int{100, 1000}),
		},
		tick: tickConfig{
			groups:  k.Int("BENCH_TICK_GROUPS", 1000),
			run:     k.Duration("BENCH_TICK_RUN", time.Second),
			jitter:  k.Duration("BENCH_JITTER", time.Minute),
			lead:    k.Duration("BENCH_TICK_LEAD", 90*time.Second),
			timeout: k.Duration("BENCH_TICK_TIMEOUT", 5*time.Minute),
		},
	}
}

// runs reports whether BENCH_PHASES selected every one of the phases.
func (b *bench) runs(phases ...string) bool {
	for _, p := range phases {
		if !b.cfg15.phases[p] {
			return false
		}
	}
	return true
}

// summaries prints the comparison with the CronJob controller and the targets of issue 8 when
// their phases ran, then the targets of issues 15 and 31 that the phases which ran measured.
func (b *bench) summaries() {
	if b.runs(issue8Phases...) {
		b.summary()
	} else {
		b.rep.Printf("\n(the comparison with the CronJob controller and the targets of issue 8 need the phases %s: not printed)",
			strings.Join(issue8Phases, ", "))
	}
	if b.runs(phaseLocks) || b.runs(phaseJitter) {
		b.issue15Summary()
	}
	b.issue31Summary()
}

// issue15Results are the numbers of the phases of issue 15.
type issue15Results struct {
	// locks are the locks phase's variants, the first without a lock.
	locks []lockRun
	// ticks are the jitter phase's ticks, the first without jitter.
	ticks []tickRound
}

// issue15Summary prints what the phases of issue 15 measured against its targets.
func (b *bench) issue15Summary() {
	r := b.results15
	b.rep.Printf("\n## Targets of issue 15 (shared locks, calendar schedules)")
	row := func(name, verdict, measured string) { b.rep.Printf("  %-52s %-7s %s", name, verdict, measured) }
	verdict := func(met bool) string {
		if met {
			return "met"
		}
		return "MISSED"
	}
	if len(r.locks) > 1 {
		base := r.locks[0].perRun
		row("no lock writes by groups naming none", verdict(base.lockStatus == 0),
			fmt.Sprintf("%.2f lock status writes per run", base.lockStatus))
		for _, v := range r.locks[1:] {
			extra := v.perRun.minus(base)
			row(fmt.Sprintf("<= 2 extra writes per run, capacity %d of %d groups", v.capacity, b.cfg15.locks.groups),
				verdict(extra.total() <= 2), fmt.Sprintf("%s; and %.2f failed lock writes (conflicts)", extra.signed(), v.failedLockWrites))
		}
	}
	for _, t := range r.ticks {
		row(fmt.Sprintf("%d groups at one tick, jitter %s", b.cfg15.tick.groups, t.jitter), "-", t.starts.summary())
	}
}

// runPhase runs the phase named name if BENCH_PHASES selected it.
func (b *bench) runPhase(ctx context.Context, name string, phase func(context.Context) error) error {
	if !b.runs(name) {
		return nil
	}
	if err := phase(ctx); err != nil {
		return fmt.Errorf("%s phase: %w", name, err)
	}
	return nil
}

// section is the section of docs/performance.md that the report goes to: bench for a run of every
// phase, bench-<phase>-<phase> for a run of some, so that it does not replace a full run's report.
func (c issue15Config) section() string {
	var some []string
	for _, p := range allPhases {
		if c.phases[p] {
			some = append(some, p)
		}
	}
	if len(some) == len(allPhases) {
		return "bench"
	}
	return "bench-" + strings.Join(some, "-")
}

// latencyPhases is the latency phase: its small groups, then the same workload with
// spec.runEvents: Failures (phase_quiet.go).
func (b *bench) latencyPhases(ctx context.Context) error {
	if err := b.latencyPhase(ctx); err != nil {
		return err
	}
	if err := b.quietPhase(ctx); err != nil {
		return fmt.Errorf("without success events: %w", err)
	}
	return nil
}
