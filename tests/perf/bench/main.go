// Command bench measures the operator on a local cluster of its own (hack/cluster, kwok nodes)
// and writes its report to docs/performance.md; make bench runs it. Eight phases, one cluster;
// BENCH_PHASES (comma-separated names, all by default) runs some of them only:
//
//  1. cronjob: the Kubernetes CronJob and Job controllers (the cluster's kube-controller-manager)
//     run CronJobs equivalent to items (concurrencyPolicy Forbid, kwok pods of the same kind), with
//     no operator running: API writes per run and start precision, the baseline of the ratios.
//  2. latency: a few small groups with short runs on the otherwise idle operator: reaction (a
//     pod's end to the group's next pod) and precision (an item's eligibility to its pod); then
//     the same groups with spec.runEvents: Failures, for their writes per run (phase_quiet.go).
//  3. scale: BENCH_GROUPS groups of BENCH_ITEMS items: the manager's memory and CPU, API writes per
//     finished run, reaction under load, then a SIGKILL and restart of the manager and the time
//     until every group that had a due item runs again, then the manager's memory once every item
//     has run (every group and the last pod of each item held). No group may ever have two live
//     pods and no item may start before it is eligible. The resume is reported by how overdue
//     the groups were, with the API writes it made and its floor (resume.go).
//  4. failover: two replicas with leader election; the leader SIGKILLed, then stopped with
//     SIGTERM; the time to the new leader's first pod (phase_failover.go).
//  5. curve: BENCH_SCALE groups of BENCH_SCALE_ITEMS items, cumulative, each step filled (every
//     item run once) and then the manager restarted; memory per group and CPU per run from the
//     slopes, and whether memory is linear in the groups (phase_curve.go).
//  6. locks (phase_locks.go): the same small groups without a lock, naming an OaatLock that has a
//     slot for each, then one of BENCH_LOCK_CAPACITY: the lock's cost in API writes per run.
//  7. handoff (phase_handoff.go): BENCH_LOCK_WAITERS groups (100, then 1000) waiting on one lock
//     of capacity 1: the reconciles and the time a slot's hand-off costs, and whether the
//     reconciles stay flat as the waiting groups grow.
//  8. jitter (phase_jitter.go): BENCH_TICK_GROUPS groups on one daily tick, without and with
//     spec.jitter: how their first pods spread after the tick, and what limits the spread.
//
// It exits non-zero when it cannot run or when a pod was duplicated (two live pods in a group, or
// a start before eligibility); missed speed targets are reported, not failed.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// config holds the knobs; the defaults are the issue's scale.
type config struct {
	groups, items              int
	scaleRun, scaleFrequency   time.Duration
	scaleWarmup, scaleWindow   time.Duration
	resumeTimeout, fillTimeout time.Duration

	latencyGroups, latencyItems int
	latencyRun, latencyFreq     time.Duration
	latencyWindow               time.Duration

	cronJobs, cronMinutes int
	cronRun               time.Duration

	failoverGroups                     int
	failoverSettle                     time.Duration
	curve                              []int
	curveItems                         int
	curveDrain, curveSettle, curveFreq time.Duration
}

func readConfig(k *perfkit.Knobs) config {
	return config{
		groups:         k.Int("BENCH_GROUPS", 1000),
		items:          k.Int("BENCH_ITEMS", 10),
		scaleRun:       k.Duration("BENCH_RUN", 20*time.Second),
		scaleFrequency: k.Duration("BENCH_FREQUENCY", time.Hour),
		scaleWarmup:    k.Duration("BENCH_WARMUP", 30*time.Second),
		scaleWindow:    k.Duration("BENCH_WINDOW", 2*time.Minute),
		resumeTimeout:  k.Duration("BENCH_RESUME_TIMEOUT", 5*time.Minute),
		fillTimeout:    k.Duration("BENCH_FILL_TIMEOUT", 10*time.Minute),
		latencyGroups:  k.Int("BENCH_LATENCY_GROUPS", 20),
		latencyItems:   k.Int("BENCH_LATENCY_ITEMS", 5),
		latencyRun:     k.Duration("BENCH_LATENCY_RUN", time.Second),
		latencyFreq:    k.Duration("BENCH_LATENCY_FREQUENCY", 20*time.Second),
		latencyWindow:  k.Duration("BENCH_LATENCY_WINDOW", 90*time.Second),
		cronJobs:       k.Int("BENCH_CRONJOBS", 20),
		cronMinutes:    k.Int("BENCH_CRON_MINUTES", 3),
		cronRun:        k.Duration("BENCH_CRON_RUN", time.Second),
		failoverGroups: k.Int("BENCH_FAILOVER_GROUPS", 10),
		failoverSettle: k.Duration("BENCH_FAILOVER_SETTLE", 20*time.Second),
		curve:          k.Ints("BENCH_SCALE", []int{1000, 2000, 3000, 4000, 5000}),
		curveItems:     k.Int("BENCH_SCALE_ITEMS", 2),
		curveDrain:     k.Duration("BENCH_SCALE_DRAIN_TIMEOUT", 10*time.Minute),
		curveSettle:    k.Duration("BENCH_SCALE_SETTLE", 30*time.Second),
		curveFreq:      k.Duration("BENCH_SCALE_FREQUENCY", 24*time.Hour),
	}
}

func main() {
	knobs := &perfkit.Knobs{}
	cfg, cfg15 := readConfig(knobs), readIssue15Config(knobs)
	b := &bench{cfg: cfg, cfg15: cfg15, rep: perfkit.NewReport(os.Stdout)}
	b.header(knobs)
	perfkit.Program{
		Name: "bench", Section: cfg15.section(), Knobs: knobs, Report: b.rep,
		// A live pod takes a slot of a fake Node (110 each); finished pods do not. The curve's
		// groups run once each, a step's new groups at a time.
		Nodes: (max(cfg.groups, cfg.cronJobs, cfg15.tick.groups)+cfg.latencyGroups+cfg.failoverGroups+largestStep(cfg.curve))/100 + 2,
		Run: func(ctx context.Context, env *perfkit.Env) ([]string, error) {
			b.env = env
			if err := b.phases(ctx); err != nil {
				return nil, err
			}
			b.summaries()
			return b.findings, nil
		},
	}.Main()
}

// bench is one run of the benchmark.
type bench struct {
	cfg      config
	env      *perfkit.Env
	rep      *perfkit.Report
	pods     *perfkit.PodRecorder
	tracker  *support.OverlapTracker
	manager  *perfkit.Manager
	findings []string // duplicated pods: the run fails
	results  results

	cfg15     issue15Config
	results15 issue15Results
	results31 issue31Results
}

// results are the numbers the ratios and the summary are made of.
type results struct {
	cronWritesPerRun, cronTotalPerRun  float64
	cronPrecision                      perfkit.Latencies
	latencyWritesPerRun, latencyTotal  float64
	scaleWritesPerRun, scaleTotal      float64
	precision, reaction, scaleReaction perfkit.Latencies
	peakRSS                            int64
	resume                             time.Duration
	resumed                            int // groups measured
	// scaleWriteRate is the workload's writes per second that the API server sustained in the
	// scale window; resumeP50, resumeDecile and resumeFloor are the resume's median, the largest
	// of its most overdue tenth of groups, and its floor (see reportResume).
	scaleWriteRate                       float64
	resumeP50, resumeDecile, resumeFloor time.Duration
	// failoverKill and failoverStop are the failovers after SIGKILL and SIGTERM of the leader,
	// from the signal to the new leader's first item pod, and failoverKillLead after SIGKILL until
	// the other replica leads (failoverPhase); curve are the steps of the scale curve (curvePhase).
	failoverKill, failoverStop, failoverKillLead time.Duration
	failoverMeasured                             bool
	curve                                        []curvePoint
	// quietWritesPerRun are the operator's writes per repeating run with spec.runEvents:
	// Failures (quietPhase).
	quietWritesPerRun float64
}

// phases runs the three phases; the manager is stopped at the end.
func (b *bench) phases(ctx context.Context) error {
	b.tracker = support.NewOverlapTracker(support.OverlapTrackerOptions{})
	b.pods = perfkit.NewPodRecorder(b.tracker)
	w, err := perfkit.RecordPods(ctx, b.env.Clientset, "", "", b.pods)
	if err != nil {
		return err
	}
	if err := b.runPhase(ctx, phaseCronJob, b.cronJobPhase); err != nil {
		return err
	}
	b.manager = perfkit.NewManager(b.env, "bench-manager", false)
	if err := os.Remove(b.manager.LogPath); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := b.manager.Start(); err != nil {
		return err
	}
	defer func() {
		if err := b.manager.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: stopping the manager:", err)
		}
	}()
	if err := b.manager.WaitReady(ctx, time.Minute); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		run  func(context.Context) error
	}{
		{phaseLatency, b.latencyPhases}, {phaseScale, b.scalePhase}, {phaseFailover, b.failoverPhase},
		{phaseCurve, b.curvePhase}, {phaseLocks, b.lockPhase}, {phaseHandOff, b.handOffPhase},
		{phaseJitter, b.jitterPhase},
	} {
		if err := b.runPhase(ctx, p.name, p.run); err != nil {
			return err
		}
	}
	for _, o := range b.tracker.Overlaps() {
		b.findings = append(b.findings, o.String())
	}
	if err := w.Stop(); err != nil {
		return fmt.Errorf("the pod watch may have missed events: %w", err)
	}
	return nil
}

// header starts the report with the command, the machine and the settings.
func (b *bench) header(knobs *perfkit.Knobs) {
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	b.rep.Printf("make bench, %s", time.Now().UTC().Format(time.RFC3339))
	b.rep.Printf("machine: %s, %d CPUs, %s, load average at start %s", host, runtime.NumCPU(), memTotal(),
		strings.Join(strings.Fields(string(load))[:3], " "))
	b.rep.Printf("settings: %s", knobs)
}

// memTotal reads the machine's memory from /proc/meminfo.
func memTotal() string {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "memory unknown"
	}
	var kb int64
	if _, err := fmt.Sscanf(string(data), "MemTotal: %d kB", &kb); err != nil {
		return "memory unknown"
	}
	return fmt.Sprintf("%.0f GiB RAM", float64(kb)/(1<<20))
}

// findingf records a duplicated pod; the run then fails.
func (b *bench) findingf(format string, args ...any) {
	b.findings = append(b.findings, fmt.Sprintf(format, args...))
}
