package forecast

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// shape is what the tests compare of a forecast: its runs, rounds and why it ended.
type shape struct {
	Runs   []Run
	Rounds []Round
	Stop   Stop
}

func shapeOf(f Forecast) shape { return shape{Runs: f.Runs, Rounds: f.Rounds, Stop: f.Stop} }

func TestPredict(t *testing.T) {
	created := -24 * time.Hour
	for _, tc := range []struct {
		name  string
		group func() *v1alpha1.OaatGroup
		pods  func(*v1alpha1.OaatGroup) []corev1.Pod
		runs  []v1alpha1.OaatRun
		opts  Options
		want  shape
	}{{
		name: "the oldest success first, then frequency after each success; the group's median run time for an item without runs",
		group: func() *v1alpha1.OaatGroup {
			return group(item{"a", ago(50 * time.Minute), 10 * time.Minute}, item{"b", ago(40 * time.Minute), 5 * time.Minute}, item{"c", nil, 0})
		},
		opts: Options{Horizon: 2 * time.Hour, MaxPasses: 100},
		want: shape{Stop: StopHorizon, Runs: []Run{
			ran("c", 0, 450*time.Second), // never succeeded: the oldest; the median of 10 and 5 minutes
			ran("a", 10*time.Minute, 10*time.Minute),
			ran("b", 20*time.Minute, 5*time.Minute),
			ran("c", 67*time.Minute+30*time.Second, 450*time.Second),
			ran("a", 80*time.Minute, 10*time.Minute),
			ran("b", 90*time.Minute, 5*time.Minute),
		}},
	}, {
		name: "spec.verify: each success is verified in the next turn, for as long as the item's runs take",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(50 * time.Minute), 10 * time.Minute}, item{"b", ago(40 * time.Minute), 5 * time.Minute})
			g.Spec.Verify = &v1alpha1.Verify{OaatType: "checker"}
			return g
		},
		opts: Options{Horizon: 40 * time.Minute, MaxPasses: 100},
		want: shape{Stop: StopHorizon, Runs: []Run{
			ran("a", 10*time.Minute, 10*time.Minute),
			verified(ran("a", 20*time.Minute, 10*time.Minute)),
			ran("b", 30*time.Minute, 5*time.Minute),
			verified(ran("b", 35*time.Minute, 5*time.Minute)),
		}},
	}, {
		name: "a random pick among items equally due is marked with their number",
		group: func() *v1alpha1.OaatGroup {
			return group(item{"a", nil, time.Minute}, item{"b", nil, time.Minute})
		},
		opts: Options{Horizon: 5 * time.Minute, MaxPasses: 100},
		want: shape{Stop: StopHorizon, Runs: []Run{
			{Item: "a", Start: at(0), End: at(time.Minute), Result: v1alpha1.ResultSucceeded, Ties: 2},
			ran("b", time.Minute, time.Minute),
		}},
	}, {
		name: "a run going at the start ends its expected time after it started",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(2 * time.Hour), 10 * time.Minute}, item{"b", ago(90 * time.Minute), 10 * time.Minute})
			g.Status.RunCount = 7
			g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "a", PodName: podbuild.Name("backups", "a", 7), StartedAt: *stampAt(-4 * time.Minute)}
			return g
		},
		pods: func(g *v1alpha1.OaatGroup) []corev1.Pod {
			return []corev1.Pod{runningPod(g, "a", 7, -4*time.Minute)}
		},
		opts: Options{Horizon: 30 * time.Minute, MaxPasses: 100},
		want: shape{Stop: StopHorizon, Runs: []Run{
			{Item: "a", Start: at(-4 * time.Minute), End: at(6 * time.Minute), Result: v1alpha1.ResultSucceeded, Going: true},
			ran("b", 6*time.Minute, 10*time.Minute),
		}},
	}, {
		name: "mode EachOnce: the round ends with its last item's success, then nothing runs",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(time.Hour), 10 * time.Minute}, item{"b", nil, 10 * time.Minute}, item{"c", nil, 20 * time.Minute})
			g.Spec.Mode = v1alpha1.ModeEachOnce
			return g
		},
		opts: Options{Horizon: 24 * time.Hour, MaxPasses: 100},
		want: shape{Stop: StopIdle,
			Runs: []Run{
				{Item: "b", Start: at(0), End: at(10 * time.Minute), Result: v1alpha1.ResultSucceeded, Ties: 2},
				ran("c", 10*time.Minute, 20*time.Minute),
			},
			Rounds: []Round{{StartedAt: at(created), EndsAt: at(30 * time.Minute)}},
		},
	}, {
		name: "a schedule whose round outlasts the tick: the rounds merge",
		group: func() *v1alpha1.OaatGroup {
			return hourly(item{"a", ago(time.Hour), 25 * time.Minute}, item{"b", ago(50 * time.Minute), 25 * time.Minute}, item{"c", ago(40 * time.Minute), 25 * time.Minute})
		},
		opts: Options{Horizon: 80 * time.Minute, MaxPasses: 100},
		want: shape{Stop: StopHorizon,
			Runs: []Run{
				ran("a", 0, 25*time.Minute),
				ran("b", 25*time.Minute, 25*time.Minute),
				ran("c", 50*time.Minute, 25*time.Minute),
				{Item: "a", Start: at(75 * time.Minute)}, // ends beyond the horizon
			},
			Rounds: []Round{
				{StartedAt: at(0), NextRoundAt: at(time.Hour), Overrun: true},
				{StartedAt: at(time.Hour), NextRoundAt: at(2 * time.Hour)},
			},
		},
	}, {
		name: "a blackout window holds the round's last item until it closes",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", nil, 10 * time.Minute}, item{"b", nil, 10 * time.Minute}, item{"c", nil, 10 * time.Minute})
			g.Spec.Mode = v1alpha1.ModeEachOnce
			g.Status.RoundStartedAt = stampAt(-time.Minute)
			g.Status.Items[0].LastSuccess = stampAt(-2 * time.Hour) // before the round: due, the oldest
			g.Status.Items[1].LastSuccess = stampAt(-90 * time.Minute)
			g.Status.Items[2].LastSuccess = stampAt(-80 * time.Minute)
			g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:15", End: "13:00"}}
			return g
		},
		opts: Options{Horizon: 3 * time.Hour, MaxPasses: 100},
		want: shape{Stop: StopIdle,
			Runs: []Run{
				ran("a", 0, 10*time.Minute),
				ran("b", 10*time.Minute, 10*time.Minute),
				ran("c", time.Hour, 10*time.Minute),
			},
			Rounds: []Round{{StartedAt: at(-time.Minute), EndsAt: at(70 * time.Minute), BlackoutAt: at(20 * time.Minute)}},
		},
	}, {
		name: "a queued on-demand run goes first, once; then the schedule's order",
		group: func() *v1alpha1.OaatGroup {
			return group(item{"a", ago(2 * time.Hour), time.Minute}, item{"b", ago(90 * time.Minute), time.Minute})
		},
		runs: []v1alpha1.OaatRun{{
			ObjectMeta: metav1.ObjectMeta{Name: "backups-now", Namespace: "ns", CreationTimestamp: *stampAt(-time.Minute)},
			Spec:       v1alpha1.OaatRunSpec{OaatGroup: "backups", Item: "b", TTLAfterFinished: "1h"},
		}},
		opts: Options{Horizon: 5 * time.Minute, MaxPasses: 100},
		want: shape{Stop: StopHorizon, Runs: []Run{
			{Item: "b", Start: at(0), End: at(time.Minute), Result: v1alpha1.ResultSucceeded, OnDemandRun: "backups-now"},
			ran("a", time.Minute, time.Minute),
		}},
	}, {
		name: "a blackout window with stopRunning interrupts a run, which runs again after it",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(2 * time.Hour), 20 * time.Minute})
			g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:10", End: "12:30", StopRunning: true}}
			return g
		},
		opts: Options{Horizon: time.Hour, MaxPasses: 100},
		want: shape{Stop: StopHorizon, Runs: []Run{
			{Item: "a", Start: at(0), End: at(10 * time.Minute), Result: v1alpha1.ResultInterrupted},
			ran("a", 30*time.Minute, 20*time.Minute),
		}},
	}, {
		name: "a suspended group runs nothing",
		group: func() *v1alpha1.OaatGroup {
			g := group(item{"a", ago(2 * time.Hour), time.Minute})
			g.Spec.Suspend = true
			return g
		},
		opts: Options{Horizon: 24 * time.Hour, MaxPasses: 100},
		want: shape{Stop: StopIdle},
	}, {
		name: "the pass limit ends the forecast",
		group: func() *v1alpha1.OaatGroup {
			return group(item{"a", ago(2 * time.Hour), time.Minute}, item{"b", ago(time.Hour), time.Minute})
		},
		opts: Options{Horizon: 24 * time.Hour, MaxPasses: 3}, // a's start, the pass its pod wakes, a's end and b's start
		want: shape{Stop: StopPassLimit, Runs: []Run{ran("a", 0, time.Minute), {Item: "b", Start: at(time.Minute)}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.group()
			in := input(g)
			if tc.pods != nil {
				in.Pods = tc.pods(g)
			}
			in.OnDemandRuns = tc.runs
			f := Predict(in, tc.opts)
			if diff := cmp.Diff(tc.want, shapeOf(f), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("forecast (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunTimes: the forecast's run times are those of runAssumption (TestRunAssumption), with
// Options.DefaultRun only when no item kept a run.
func TestRunTimes(t *testing.T) {
	opts := Options{Horizon: time.Minute, MaxPasses: 1, DefaultRun: 2 * time.Minute}
	g := group(item{"a", nil, 0}, item{"b", nil, 0})
	want := []RunTime{{Item: "a", Run: 2 * time.Minute, Basis: BasisDefault}, {Item: "b", Run: 2 * time.Minute, Basis: BasisDefault}}
	if diff := cmp.Diff(want, Predict(input(g), opts).RunTimes); diff != "" {
		t.Errorf("run times without a kept run (-want +got):\n%s", diff)
	}
	g.Status.Items[1].RecentRunSeconds = []int64{30, 90, 0}
	want = []RunTime{{Item: "a", Run: 30 * time.Second, Basis: BasisGroupMedian}, {Item: "b", Run: 90 * time.Second, Basis: BasisLongest}}
	if diff := cmp.Diff(want, Predict(input(g), opts).RunTimes); diff != "" {
		t.Errorf("run times (-want +got):\n%s", diff)
	}
}

func TestSimulateReusesTheFirstPlan(t *testing.T) {
	g := group(item{"a", ago(2 * time.Hour), time.Minute}, item{"b", ago(time.Hour), time.Minute})
	in := input(g)
	in.Rand = fixedRand{}
	first := planner.Decide(in)
	f := Simulate(in, first, Options{Horizon: 90 * time.Second, MaxPasses: 100})
	want := shape{Stop: StopHorizon, Runs: []Run{ran("a", 0, time.Minute), {Item: "b", Start: at(time.Minute)}}}
	if diff := cmp.Diff(want, shapeOf(f), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("forecast (-want +got):\n%s", diff)
	}
	if f.Start.CurrentRun == nil || f.Start.CurrentRun.Item != "a" {
		t.Errorf("start status %+v: want a running at the start", f.Start.CurrentRun)
	}
	if g.Status.CurrentRun != nil || len(in.Pods) != 0 {
		t.Errorf("the forecast changed its input: current run %+v, pods %d", g.Status.CurrentRun, len(in.Pods))
	}
}

func TestPredictHeldLock(t *testing.T) {
	g := group(item{"a", ago(2 * time.Hour), time.Minute})
	g.Spec.Locks = []string{"nas"}
	lock := builders.Lock("nas", 0, builders.Holder("other", "other-x-1", stampAt(-time.Minute)))
	in := input(g)
	in.Locks.Locks = map[string]v1alpha1.Lock{"nas": lock}
	f := Predict(in, Options{Horizon: time.Hour, MaxPasses: 100})
	if diff := cmp.Diff(shape{Stop: StopLockHeld}, shapeOf(f), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("forecast (-want +got):\n%s", diff)
	}

	lock.Status.Holders = nil
	f = Predict(in, Options{Horizon: 3 * time.Minute, MaxPasses: 100})
	if diff := cmp.Diff(shape{Stop: StopHorizon, Runs: []Run{ran("a", 0, time.Minute)}}, shapeOf(f), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("forecast with the lock free (-want +got):\n%s", diff)
	}
}

// fixedRand always picks the first of the ties.
type fixedRand struct{}

func (fixedRand) IntN(int) int { return 0 }

// TestPredictLockReviews: the group's locks are reviewed as their reconciler would after each pass
// (locks.Decide): a free lock grants the group's request at once, the slot of its ended run is
// dropped and the next run's request granted; an earlier waiter of the lock keeps the free slot,
// and the group is forecast to wait for it.
func TestPredictLockReviews(t *testing.T) {
	g := group(item{"a", ago(2 * time.Hour), time.Minute}, item{"b", ago(90 * time.Minute), time.Minute})
	g.Spec.Locks = []string{"nas"}
	in := input(g)
	in.Locks.Locks = map[string]v1alpha1.Lock{"nas": builders.Lock("nas", 1)}
	f := Predict(in, Options{Horizon: 150 * time.Second, MaxPasses: 100})
	want := shape{Stop: StopHorizon, Runs: []Run{ran("a", 0, time.Minute), ran("b", time.Minute, time.Minute)}}
	if diff := cmp.Diff(want, shapeOf(f), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("forecast with the lock free (-want +got):\n%s", diff)
	}
	if in.Locks.Locks["nas"].LockHolders() != nil {
		t.Errorf("the forecast changed its input's lock: holders %+v", in.Locks.Locks["nas"].LockHolders())
	}

	in.Locks.Waiters = []locks.Waiter{{Place: locks.Place{Since: at(-time.Hour), Namespace: "ns", Group: "earlier"},
		Pod: "earlier-pod", Locks: []string{"nas"}}}
	f = Predict(in, Options{Horizon: time.Hour, MaxPasses: 100})
	if diff := cmp.Diff(shape{Stop: StopLockHeld}, shapeOf(f), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("forecast behind an earlier waiter (-want +got):\n%s", diff)
	}
	if w := f.Start.LockWait; w == nil || w.Item != "a" || !slices.Equal(w.Locks, []string{"nas"}) {
		t.Errorf("the group's request at the start, where it stays: %+v, want one for item a waiting for nas", w)
	}
}

// TestPredictCapacityWindow: a group waiting for a lock whose capacity schedule gives it no slot
// now (a window of 0 until 12:30) is forecast to start when the window closes and the lock grants
// its request, not to wait for good; held by another group, it waits for good.
func TestPredictCapacityWindow(t *testing.T) {
	g := group(item{"a", ago(2 * time.Hour), time.Minute})
	g.Spec.Locks = []string{"nas"}
	lock := builders.Lock("nas", 1)
	lock.Spec.CapacitySchedule = []v1alpha1.CapacityWindow{{Start: "11:00", End: "12:30", Capacity: ptr.To[int32](0)}}
	in := input(g)
	in.Locks.Locks = map[string]v1alpha1.Lock{"nas": lock}
	f := Predict(in, Options{Horizon: time.Hour, MaxPasses: 100})
	want := shape{Stop: StopHorizon, Runs: []Run{ran("a", 30*time.Minute, time.Minute)}}
	if diff := cmp.Diff(want, shapeOf(f), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("forecast (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]LockCapacity{{Lock: "nas", Capacity: locks.Capacity{InForce: 0, NextAt: t0.Add(30 * time.Minute), Next: 1}}}, f.Capacities); diff != "" {
		t.Errorf("the locks' capacities at the start (-want +got):\n%s", diff)
	}

	lock.Status.Holders = []v1alpha1.LockHolder{builders.Holder("other", "other-x-1", stampAt(-time.Minute))}
	f = Predict(in, Options{Horizon: time.Hour, MaxPasses: 100})
	if diff := cmp.Diff(shape{Stop: StopLockHeld}, shapeOf(f), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("forecast with the lock held after the window (-want +got):\n%s", diff)
	}
}
