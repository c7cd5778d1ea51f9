// Package forecast says ahead what a group will run: it plays the planner's own decision
// (planner.Decide) forward on a simulated clock, with simulated pods that each succeed after their
// item's expected run time, and reads the runs, the rounds and the waits off the plans it makes.
// The order is the planner's: nothing here chooses an item. Failures are not predicted, on-demand
// runs are those already queued, and the locks stay as held at the start, but for the group's own
// slots, which each lock's simulated review grants and drops as the group asks and runs. It is pure: the caller gives the snapshot (a
// planner.Input) and the first plan made from it.
package forecast

import (
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// Options bound a forecast.
type Options struct {
	// Horizon is how far ahead of the snapshot's time the forecast looks.
	Horizon time.Duration
	// MaxPasses caps the simulated passes of Decide (a run takes about two: the pass that starts
	// it, which also records the previous run's end, and the pass its new pod wakes).
	MaxPasses int
	// DefaultRun is the run time of an item that kept no run when no item of the group kept one
	// (runAssumption).
	DefaultRun time.Duration
	// UntilAssessed ends the forecast once every item has a predicted success after the start and
	// the round going at the start (mode EachOnce, a schedule) has ended: all that Assess reads.
	UntilAssessed bool
	// Replay plays every pass through Decide, also for a plain group (plain.go): the reference
	// the plain play is tested against.
	Replay bool
}

// DefaultRun is the run time assumed for an item that kept no run when no item of its group kept
// one either.
const DefaultRun = 5 * time.Minute

// Stop says why a forecast ended.
type Stop string

const (
	// StopHorizon means the next thing to happen lies beyond the horizon.
	StopHorizon Stop = "Horizon"
	// StopIdle means nothing happens again until something changes (the group is done, suspended, not
	// Ready, or waits for a lock or a change).
	StopIdle Stop = "Idle"
	// StopLockHeld means the group waits for a lock that other groups hold, taken to stay held.
	StopLockHeld Stop = "LockHeld"
	// StopPassLimit means the forecast made Options.MaxPasses passes.
	StopPassLimit Stop = "PassLimit"
	// StopAssessed means with Options.UntilAssessed, all that Assess reads is known.
	StopAssessed Stop = "Assessed"
)

// Run is a predicted run.
type Run struct {
	// Item is the item that runs.
	Item string
	// Start and End are when it starts and ends (End is zero when it ends beyond the forecast).
	Start, End time.Time
	// Result is how it ends, empty when it ends beyond the forecast: succeeded, or interrupted by
	// a blackout window with stopRunning.
	Result v1alpha1.RunResult
	// OnDemandRun names the OaatRun the run serves, empty for a run of the schedule.
	OnDemandRun string
	// Ties is, when the schedule picked the item at random among equally due items, how many
	// they were (the operator's random choice may differ); zero otherwise.
	Ties int
	// Going says that the run was already going at the start of the forecast.
	Going bool
	// Verify says that the run is a verification of the item's last success (spec.verify), which
	// takes as long as the item's runs are expected to.
	Verify bool
}

// Round is a round (mode EachOnce, or a schedule's tick) seen by the forecast.
type Round struct {
	// StartedAt is when it started (status.roundStartedAt).
	StartedAt time.Time
	// EndsAt is when its last item succeeds; zero when that lies beyond the forecast.
	EndsAt time.Time
	// NextRoundAt is when the next round starts (status.nextRoundAt), zero without a schedule.
	NextRoundAt time.Time
	// Overrun says that the next round started before this one ended (they merge).
	Overrun bool
	// BlackoutAt is when, before the round ended, its pending items began to wait for a blackout
	// window (wait reason Blackout or Overrun); zero when they never did.
	BlackoutAt time.Time
}

// Forecast is what a group is predicted to run.
type Forecast struct {
	// From is the snapshot's time, Until the end of the horizon.
	From, Until time.Time
	// ReachedAt is the simulated time of the last pass.
	ReachedAt time.Time
	// Stop says why the forecast ended.
	Stop Stop
	// Passes is how many passes of Decide it made, the snapshot's first plan included.
	Passes int
	// RunTimes are the run time assumed for each item, in the group's order.
	RunTimes []RunTime
	// Runs are the predicted runs, in order.
	Runs []Run
	// Rounds are the rounds seen, in order; empty for a group without rounds.
	Rounds []Round
	// Start is the status at the start (after the first plan).
	Start v1alpha1.OaatGroupStatus
	// Capacities are the capacities of the group's locks that have a capacity schedule, at the
	// start, by lock key.
	Capacities []LockCapacity
}

// LockCapacity is the capacity of one of the group's locks at the start of the forecast.
type LockCapacity struct {
	// Lock is the lock's key among the group's locks.
	Lock string
	// Capacity is its capacity in force and next change (spec.capacitySchedule).
	Capacity locks.Capacity
}

// Simulate plays the group forward from in (and first, the plan Decide made from it) until the
// horizon, the pass limit, or the group has nothing more to do.
func Simulate(in planner.Input, first planner.Plan, opts Options) Forecast {
	return newSimulation(in, opts).run(first)
}

// simulation is the state a forecast plays forward.
type simulation struct {
	in       planner.Input
	opts     Options
	group    v1alpha1.OaatGroup
	pods     []corev1.Pod
	runs     []v1alpha1.OaatRun
	locks    map[string]v1alpha1.Lock
	now      time.Time
	rand     *countingRand
	forecast Forecast
	// running is the index in forecast.Runs of the run in progress, -1 when none.
	running int
	// runEnds are the expected run times by item.
	runEnds map[string]time.Duration
	// assumed is the run assumption the expected run times come from.
	assumed runAssumption
	// awaited are the items due at the start without a predicted success yet (assessed).
	awaited map[string]bool
}

func newSimulation(in planner.Input, opts Options) *simulation {
	if opts.DefaultRun <= 0 {
		opts.DefaultRun = DefaultRun
	}
	s := &simulation{
		in:      in,
		opts:    opts,
		group:   *in.Group.DeepCopy(),
		pods:    append([]corev1.Pod(nil), in.Pods...),
		runs:    append([]v1alpha1.OaatRun(nil), in.OnDemandRuns...),
		locks:   make(map[string]v1alpha1.Lock, len(in.Locks.Locks)),
		now:     in.Now,
		rand:    &countingRand{rand: rand.New(rand.NewPCG(1, 2))},
		running: -1,
		runEnds: map[string]time.Duration{},
	}
	for k, l := range in.Locks.Locks {
		s.locks[k] = l
	}
	s.forecast.From = in.Now
	s.forecast.Until = in.Now.Add(opts.Horizon)
	return s
}

// run plays the passes from the first plan on: played by the plain play when the group is plain
// after the first pass, else replayed through Decide.
func (s *simulation) run(first planner.Plan) Forecast {
	f := &s.forecast
	f.Start = *first.Status.DeepCopy()
	f.RunTimes = s.runTimes(first.Status.Items)
	f.Capacities = s.capacities()
	s.awaited = map[string]bool{}
	for _, it := range f.Start.Items {
		if !heldAtStart(it.WaitReason) {
			s.awaited[it.Name] = true
		}
	}
	s.pass(first)
	if p, err := groupspec.Read(&s.group); s.plain(p, err) {
		s.runPlain(p.Timing, first.Create != nil)
	} else {
		s.replay(first)
	}
	f.ReachedAt = s.now
	return *f
}

// pass takes in a plan Decide made: the runs it ends and starts, and its status.
func (s *simulation) pass(plan planner.Plan) {
	s.forecast.Passes++
	s.observe(plan)
	s.apply(plan)
}

// replay plays the passes after the first (plan) through Decide, to the forecast's stop.
func (s *simulation) replay(plan planner.Plan) {
	f := &s.forecast
	for {
		next, ok := s.nextEvent(plan)
		if f.Stop = s.stopBefore(next, ok); f.Stop != "" {
			return
		}
		s.advance(next)
		plan = planner.Decide(s.input())
		s.pass(plan)
	}
}

// stopBefore is why the forecast stops before its next pass, at next (ok false: there is none);
// empty when it goes on.
func (s *simulation) stopBefore(next time.Time, ok bool) Stop {
	switch {
	case s.opts.UntilAssessed && s.assessed():
		return StopAssessed
	case s.group.Status.LockWait != nil && s.group.Status.CurrentRun == nil && !s.granted() && s.capacityChange().IsZero():
		return StopLockHeld
	case !ok:
		return StopIdle
	case next.After(s.forecast.Until):
		return StopHorizon
	case s.forecast.Passes >= max(s.opts.MaxPasses, 1):
		return StopPassLimit
	}
	return ""
}

// capacities are the capacities now of the group's locks that have a capacity schedule.
func (s *simulation) capacities() []LockCapacity {
	var out []LockCapacity
	for _, key := range s.group.Spec.LockKeys() {
		if l := s.locks[key]; l != nil && len(l.CapacityWindows()) > 0 {
			out = append(out, LockCapacity{Lock: key, Capacity: locks.CapacityAt(l, s.now)})
		}
	}
	return out
}

// runTimes are the expected run times of the items (runAssumption), which it keeps by item.
func (s *simulation) runTimes(items []v1alpha1.ItemStatus) []RunTime {
	s.assumed = assumeRuns(items, s.opts.DefaultRun)
	out := make([]RunTime, 0, len(items))
	for _, it := range items {
		rt := s.assumed.of(it)
		s.runEnds[it.Name] = rt.Run
		out = append(out, rt)
	}
	return out
}

// input is the snapshot of the next pass.
func (s *simulation) input() planner.Input {
	in := s.in
	in.Group = &s.group
	in.Pods = s.pods
	in.OnDemandRuns = s.runs
	in.Now = s.now
	in.Rand = s.rand
	in.Locks.Locks = s.locks
	in.StatusRefusedAt = time.Time{}
	s.rand.calls, s.rand.n = 0, 0
	return in
}

// countingRand is the simulation's seeded random source; it records the last tie it broke.
type countingRand struct {
	rand  *rand.Rand
	calls int
	n     int
}

// IntN returns a number in [0, n) and records n.
func (r *countingRand) IntN(n int) int {
	r.calls++
	r.n = n
	return r.rand.IntN(n)
}

// Predict makes the first plan from in itself (its random source replaced by the forecast's, so
// that a random pick of the first run is seen) and plays the group forward from it.
func Predict(in planner.Input, opts Options) Forecast {
	rng := &countingRand{rand: rand.New(rand.NewPCG(1, 2))}
	in.Rand = rng
	first := planner.Decide(in)
	s := newSimulation(in, opts)
	s.rand = rng
	return s.run(first)
}
