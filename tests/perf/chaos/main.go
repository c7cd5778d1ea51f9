// Command chaos checks the operator's invariants under faults on a local cluster of its own
// (hack/cluster, kwok nodes) and writes its report to docs/performance.md; make chaos runs it.
//
// Two replicas of the manager run with leader election. For CHAOS_MINUTES the run SIGKILLs the
// leader at random intervals (the replica is started again, as a Deployment would), deletes random
// live item pods, restarts kube-apiserver once and edits random groups' specs (adds or removes an
// item, changes the frequency). Item pods run for kwok's random 2-8 s and succeed or fail at
// random. Half of the groups name shared OaatLocks (one of capacity 1, one of capacity 2, some
// groups both, in either order). At random intervals it deletes a lock and creates it again, gives
// a lock another capacity (1 to 3), and adds a lock to or removes one from a group while its runs
// go on. Informers record every pod's lifetime and every write of every group's status.
//
// With a second installation (CHAOS_SECOND_INSTALL, on by default), the replicas watch namespace
// chaos only, and one more manager process, started again after SIGKILLs at random intervals,
// watches chaos-b only, with a Lease of its own in chaos-b-operator. A ClusterOaatLock (shared)
// is named by some groups of chaos and by every group of chaos-b: both installations record their
// holders in it. The lock faults above apply to it too.
//
// Then it checks: no two live pods of a group at any instant; no pod of a group naming a lock
// started while as many pods as its capacity held it (for the cluster lock, the pods of both
// namespaces) (runs that started before a capacity cut, or
// before their group named the lock, drain); every run's outcome recorded exactly once (from
// the status writes, with the outcome events as a cross-check); no item starved beyond its
// frequency plus a bound; no lock holder left without its run once the groups are drained; and,
// over a final window without faults, the leader's oaat_item_runs_total against the pods that
// actually finished. It exits 1 when an
// invariant that must hold was broken, 2 when it could not run, and stops by itself.
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// namespace holds the chaos run's groups and pods, those of the main installation.
const namespace = "chaos"

// bNamespace holds the groups and pods of the second installation, bLeaseNamespace its Lease.
const (
	bNamespace      = "chaos-b"
	bLeaseNamespace = "chaos-b-operator"
)

type config struct {
	window           time.Duration
	groups, items    int
	killMin, killMax time.Duration
	deleteEvery      time.Duration
	// evictEvery is the mean interval between evictions of a live item pod; 0 for none.
	evictEvery time.Duration
	editEvery  time.Duration
	// recreateEvery is the mean interval between deletions and re-creations of a shared lock
	// (kubectl replace --force, a GitOps re-create): it comes back without holders while runs
	// hold it; 0 for none.
	recreateEvery time.Duration
	// resizeEvery is the mean interval between changes of a shared lock's capacity (1 to 3; a
	// cut below its holders lets them drain); 0 for none.
	resizeEvery time.Duration
	// relockEvery is the mean interval between a shared lock added to, or removed from, a random
	// group's spec.locks while its runs go on; 0 for none.
	relockEvery       time.Duration
	restartDelay      time.Duration
	settle            time.Duration
	perItem, failover time.Duration
	seed              uint64
	// createFaults is the fraction of pod creations the API proxy faults after forwarding them.
	createFaults float64
	// pauseEvery is the mean interval between SIGSTOPs of the leader; each lasts leaseDuration
	// (the replicas' Lease duration) plus 4 to 10 s: the other replica takes the Lease up to a
	// retry period (2 s) after it expired and acts at once, so the stopped one mostly resumes
	// after the new leader has acted.
	pauseEvery, leaseDuration time.Duration
	// slowEvery is the mean interval between slow spells, each slowFor long, during which the
	// replicas' pod watches lag by watchLag.
	slowEvery, slowFor, watchLag time.Duration
	// bGroups are the groups of bNamespace, which a second installation of the manager runs,
	// each naming the cluster lock; 0 for no second installation (and no cluster lock).
	bGroups int
	// bKillEvery is the mean interval between SIGKILLs of the second installation; 0 for none.
	bKillEvery time.Duration
}

// replicaCount is the number of replicas of the manager; bReplicaCount that of the second
// installation.
const (
	replicaCount  = 2
	bReplicaCount = 1
)

func readConfig(k *perfkit.Knobs) config {
	groups := k.Int("CHAOS_GROUPS", 40)
	cfg := config{
		window:      time.Duration(k.Int("CHAOS_MINUTES", 10)) * time.Minute,
		groups:      groups,
		items:       k.Int("CHAOS_ITEMS", 4),
		killMin:     k.Duration("CHAOS_KILL_MIN", 15*time.Second),
		killMax:     k.Duration("CHAOS_KILL_MAX", 60*time.Second),
		deleteEvery: k.Duration("CHAOS_DELETE_EVERY", 10*time.Second),
		evictEvery:  k.Duration("CHAOS_EVICT_EVERY", 15*time.Second),
		editEvery:   k.Duration("CHAOS_EDIT_EVERY", 10*time.Second),
		// A lock re-created every 20 s on average: of 40 groups, 10 name each lock, and a run of
		// one holds it most of the time.
		recreateEvery: k.Duration("CHAOS_LOCK_RECREATE_EVERY", 20*time.Second),
		resizeEvery:   k.Duration("CHAOS_LOCK_RESIZE_EVERY", 30*time.Second),
		relockEvery:   k.Duration("CHAOS_LOCK_EDIT_EVERY", 15*time.Second),
		restartDelay:  k.Duration("CHAOS_RESTART_DELAY", 3*time.Second),
		settle:        k.Duration("CHAOS_SETTLE", time.Minute),
		perItem:       k.Duration("CHAOS_STARVE_PER_ITEM", 10*time.Second),
		failover:      k.Duration("CHAOS_STARVE_FAILOVER", 30*time.Second),
		seed:          uint64(k.Int("CHAOS_SEED", int(time.Now().UnixNano()%1e9))),
		createFaults:  float64(k.Int("CHAOS_CREATE_FAULT_PERCENT", 10)) / 100,
		pauseEvery:    k.Duration("CHAOS_PAUSE_EVERY", time.Minute),
		// controller-runtime's default; cmd/main.go sets no other.
		leaseDuration: k.Duration("CHAOS_LEASE_DURATION", 15*time.Second),
		slowEvery:     k.Duration("CHAOS_SLOW_EVERY", time.Minute),
		slowFor:       k.Duration("CHAOS_SLOW_FOR", 20*time.Second),
		watchLag:      k.Duration("CHAOS_WATCH_LAG", 8*time.Second),
	}
	if k.Int("CHAOS_SECOND_INSTALL", 1) > 0 {
		cfg.bGroups = k.Int("CHAOS_B_GROUPS", max(2, groups/8))
		cfg.bKillEvery = k.Duration("CHAOS_B_KILL_EVERY", 90*time.Second)
	}
	return cfg
}

// chaos is one chaos run.
type chaos struct {
	cfg      config
	env      *perfkit.Env
	rep      *perfkit.Report
	rng      *rand.Rand
	replicas *replicas
	// second is the second installation, nil without one.
	second *replicas
	// plan are the run's groups as created.
	plan     []groupPlan
	proxy    *apiProxy
	pauser   *pauser
	observer *observer
	tracker  *support.OverlapTracker
	locks    *lockWatch
	history  *specHistory
	faults   faults
	slow     slowSpells
	// itemSerial numbers the items that edits add.
	itemSerial int
	// violations are broken invariants: the run fails.
	violations []string
}

func main() {
	knobs := &perfkit.Knobs{}
	cfg := readConfig(knobs)
	c := &chaos{
		cfg: cfg, rep: perfkit.NewReport(os.Stdout), rng: rand.New(rand.NewPCG(cfg.seed, 0)),
		history: newSpecHistory(),
	}
	host, _ := os.Hostname()
	installs := fmt.Sprintf("%d replicas of the manager", replicaCount)
	if cfg.bGroups > 0 {
		installs += fmt.Sprintf(" watching %s; a second installation of %d replica watching %s", namespace, bReplicaCount, bNamespace)
	}
	c.rep.Printf("make chaos, %s, on %s (%s)", time.Now().UTC().Format(time.RFC3339), host, installs)
	c.rep.Printf("settings: %s", knobs)
	perfkit.Program{
		Name: "chaos", Knobs: knobs, Report: c.rep, Nodes: 2,
		Run: func(ctx context.Context, env *perfkit.Env) ([]string, error) {
			c.env = env
			err := c.run(ctx)
			return c.violations, err
		},
	}.Main()
}

// run sets up the workload and the replicas, applies the faults, then checks.
func (c *chaos) run(ctx context.Context) error {
	for _, ns := range c.namespaces() {
		if err := c.env.Namespace(ctx, ns); err != nil {
			return err
		}
	}
	c.plan = planGroups(c.cfg.groups, c.cfg.bGroups)
	c.tracker = support.NewOverlapTracker(support.OverlapTrackerOptions{KeepHistory: true})
	c.locks = newLockWatch(runLocks(c.cfg.bGroups > 0), c.plan, time.Now())
	c.history.peers = c.locks.peers()
	c.observer = &observer{pods: perfkit.NewPodRecorder(c.tracker), ledger: newLedger()}
	obsCtx, stopObserver := context.WithCancel(ctx)
	defer stopObserver()
	if err := c.observer.start(obsCtx, c.env.Admin, c.namespaces()); err != nil {
		return err
	}
	if err := c.createWorkload(ctx); err != nil {
		return err
	}
	if err := c.startProxy(); err != nil {
		return err
	}
	defer c.proxy.close()
	primary := installation{prefix: "chaos-manager"}
	if c.cfg.bGroups > 0 {
		primary.watch = namespace // else it would run the groups of bNamespace too
	}
	var err error
	if c.replicas, err = newReplicas(c.env, c.proxy, primary, replicaCount, c.cfg.restartDelay, c.logf); err != nil {
		return err
	}
	c.pauser = &pauser{replicas: c.replicas, proxy: c.proxy, log: c.logf}
	supCtx, stopReplicas := context.WithCancel(ctx)
	supervised := make(chan struct{})
	go func() { c.replicas.supervise(supCtx); close(supervised) }()
	defer func() { stopReplicas(); <-supervised }()
	if _, err := c.replicas.waitLeader(ctx, 2*time.Minute); err != nil {
		return err
	}
	if c.cfg.bGroups > 0 {
		stopSecond, err := c.startSecond(ctx)
		if err != nil {
			return err
		}
		defer stopSecond()
	}
	start := time.Now()
	if err := c.unleash(ctx); err != nil {
		return err
	}
	end := time.Now()
	c.rep.Printf("\n## Faults over %s (seed %d)", end.Sub(start).Round(time.Second), c.cfg.seed)
	c.reportFaults()
	check, err := c.checkMetrics(ctx)
	if err != nil {
		return err
	}
	c.checkInvariants(ctx, end)
	if err := c.checkLeaks(ctx); err != nil {
		return err
	}
	c.rep.Printf("  verdict: %d invariant violations", len(c.violations))
	c.rep.Printf("%s", check)
	return nil
}

// createWorkload creates, in each namespace of the run, an OaatType whose pods run 2-8 s and
// succeed or fail at random (kwok's defaults), the locks, and the groups (planGroups), each with a
// random frequency, some naming locks.
func (c *chaos) createWorkload(ctx context.Context) error {
	var objs []client.Object
	for _, ns := range c.namespaces() {
		objs = append(objs, perfkit.NewOaatType(ns, "random", perfkit.PodTemplate("", "")))
	}
	for _, l := range c.locks.locks {
		objs = append(objs, l.object(lockSpec{capacity: l.capacity}))
	}
	c.rep.Printf("shared locks: %s", c.locks.describe())
	now := time.Now()
	for _, g := range c.plan {
		freq := frequencies[c.rng.IntN(len(frequencies))]
		group := perfkit.NewGroup(g.namespace, g.name, "random", freq, perfkit.Items(c.cfg.items))
		group.Spec.Locks, group.Spec.ClusterLocks, group.Spec.Priority, group.Spec.LockOptions = g.locks, g.clusterLocks, g.priority, g.lockOptions()
		objs = append(objs, group)
		d, _ := time.ParseDuration(freq)
		c.history.setFrequency(g.name, d, now)
		for _, item := range perfkit.Items(c.cfg.items) {
			c.history.add(g.name, item, now)
		}
	}
	return perfkit.CreateAll(ctx, c.env.Client, objs)
}

func groupName(i int) string { return "g-" + strconv.Itoa(i) }

// bGroupName names the groups of bNamespace apart from those of namespace.
func bGroupName(i int) string { return "b-" + strconv.Itoa(i) }

// namespaces are the namespaces of the run's groups: namespace, and bNamespace with a second
// installation.
func (c *chaos) namespaces() []string {
	if c.cfg.bGroups > 0 {
		return []string{namespace, bNamespace}
	}
	return []string{namespace}
}

// allPods returns the lifetimes of the item pods of every namespace of the run, in the order they
// were seen.
func (c *chaos) allPods() []perfkit.PodLife {
	var pods []perfkit.PodLife
	for _, ns := range c.namespaces() {
		pods = append(pods, c.observer.pods.Pods(ns)...)
	}
	slices.SortStableFunc(pods, func(a, b perfkit.PodLife) int { return a.SeenCreated.Compare(b.SeenCreated) })
	return pods
}

// logf prints progress to standard error.
func (c *chaos) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "chaos %s: %s\n", time.Now().Format(time.TimeOnly), fmt.Sprintf(format, args...))
}

// violationf records a broken invariant.
func (c *chaos) violationf(format string, args ...any) {
	c.violations = append(c.violations, fmt.Sprintf(format, args...))
}
