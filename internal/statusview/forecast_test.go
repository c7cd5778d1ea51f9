package statusview

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/forecast"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestWriteForecast(t *testing.T) {
	now, stamp := builders.T0, builders.At
	g := builders.Group("a", "b", "c").Generation(1).Created(-90*time.Minute).ItemStatus(
		v1alpha1.ItemStatus{Name: "a", LastSuccess: stamp(-80 * time.Minute), RecentRunSeconds: []int64{600}},
		v1alpha1.ItemStatus{Name: "b", RecentRunSeconds: []int64{1200, 900}},
		v1alpha1.ItemStatus{Name: "c"}).Obj()
	g.Spec.Mode, g.Spec.BlackoutWindows = v1alpha1.ModeEachOnce, []v1alpha1.BlackoutWindow{{Start: "12:22", End: "13:00"}}
	g.Status.RoundStartedAt = stamp(-time.Hour)
	typ := builders.Type().Obj()
	f := forecast.Predict(planner.Input{Group: g, Type: typ, Now: now}, forecast.Options{Horizon: 6 * time.Hour, MaxPasses: 100})
	var out strings.Builder
	if err := WriteForecast(&out, g, f, forecast.Assess(g, f)); err != nil {
		t.Fatal(err)
	}
	want := `ns/backups  forecast for 6h from 2026-11-21T12:00:00Z  ready=unknown  running=none
  START                        END                          ITEM  NOTE
  2026-11-21T12:00:00Z (+0s)   2026-11-21T12:20:00Z (+20m)  b     picked at random among 2 equally due: the operator's pick may differ
  2026-11-21T12:20:00Z (+20m)  2026-11-21T12:35:00Z (+35m)  c
  2026-11-21T13:00:00Z (+60m)  2026-11-21T13:10:00Z (+70m)  a
  round: started 2026-11-21T11:00:00Z (-60m), ends 2026-11-21T13:10:00Z (+70m); its items wait for a blackout window from 2026-11-21T12:35:00Z (+35m)
  at risk: the round waits for a blackout window from 2026-11-21T12:35:00Z: its end predicted 2026-11-21T13:10:00Z
  forecast ends: nothing more runs until something changes (the group is done, suspended, not Ready, or waits for a change)
  assumptions:
    - run times: a 10m0s (longest recent run), b 20m0s (longest recent run), c 15m0s (no run recorded: the group's median)
    - every run succeeds in its run time; failures, cool-offs and the circuit breaker's probes are not predicted
    - the order and the waits are the operator's planner's own, played forward on a simulated clock
    - blackout windows: the 1 of spec.blackoutWindows
    - on-demand runs: those queued now; none added
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("forecast (-want +got):\n%s", diff)
	}
}

func TestForecastLines(t *testing.T) {
	from := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	at := from.Add
	got := []string{
		runNote(forecast.Run{Item: "a", Start: at(-time.Minute), End: at(time.Minute), Result: v1alpha1.ResultSucceeded, Going: true, OnDemandRun: "backups-x1"}),
		runNote(forecast.Run{Item: "a", Start: at(0), End: at(time.Minute), Result: v1alpha1.ResultInterrupted}),
		runNote(forecast.Run{Item: "a", Start: at(0)}),
		runNote(forecast.Run{Item: "a", Start: at(0), End: at(time.Minute), Result: v1alpha1.ResultSucceeded, Verify: true}),
		roundLine(forecast.Round{StartedAt: at(0), NextRoundAt: at(time.Hour), Overrun: true}, from),
		stopLine(forecast.Forecast{Stop: forecast.StopLockHeld, ReachedAt: at(time.Minute)}),
		stopLine(forecast.Forecast{Stop: forecast.StopPassLimit, ReachedAt: at(time.Hour), Passes: 20000}),
		stopLine(forecast.Forecast{Stop: forecast.StopHorizon, Until: at(24 * time.Hour)}),
	}
	want := []string{
		"running now; on demand: backups-x1",
		"interrupted by a blackout window with stopRunning",
		"ends beyond the forecast",
		"verification of its last success (assumed as long as its runs)",
		"started 2026-11-21T12:00:00Z (+0s), does not end within the forecast; next round 2026-11-21T13:00:00Z (+60m): late, it merges into the next round",
		"at 2026-11-21T12:01:00Z, waiting for a lock that other groups hold (taken to stay held)",
		"at 2026-11-21T13:00:00Z, after 20000 passes (the limit)",
		"the horizon 2026-11-22T12:00:00Z",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestWriteForecastAssumptions(t *testing.T) {
	g := builders.Group().Named("nightly").Schedule("0 1 * * *", "Europe/Berlin").Locks("nas").ClusterLocks("wan").Obj()
	var out strings.Builder
	f := forecast.Forecast{From: builders.T0, RunTimes: []forecast.RunTime{{Item: "a", Run: 5 * time.Minute, Basis: forecast.BasisDefault}},
		Capacities: []forecast.LockCapacity{{Lock: "nas", Capacity: locks.Capacity{InForce: 0, NextAt: builders.T0.Add(30 * time.Minute), Next: 2}}}}
	if err := writeAssumptions(&out, g, f); err != nil {
		t.Fatal(err)
	}
	want := `  assumptions:
    - run times: a 5m0s (no run recorded: default)
    - every run succeeds in its run time; failures, cool-offs and the circuit breaker's probes are not predicted
    - the order and the waits are the operator's planner's own, played forward on a simulated clock
    - schedule "0 1 * * *" in Europe/Berlin
    - locks nas, ClusterOaatLock/wan: as held now; other groups' slots are not given back within the forecast; a capacity schedule (spec.capacitySchedule) raises and cuts a lock's capacity on time
    - lock nas: capacity 0 now by its spec.capacitySchedule, 2 from 2026-11-21T12:30:00Z (+30m)
    - on-demand runs: those queued now; none added
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("assumptions (-want +got):\n%s", diff)
	}
}
