package metrics

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRunMetricsObserve(t *testing.T) {
	m := NewRunMetrics()
	m.Observe("ns", "backups", "/srv/photos", "succeeded", 90*time.Second)
	m.Observe("ns", "backups", "/srv/photos", "failed", 3*time.Second)
	m.Observe("ns", "backups", "/srv/photos", "failed", 4*time.Second)

	expectRunsTotal(t, m,
		`oaat_item_runs_total{group="backups",item="/srv/photos",namespace="ns",result="failed"} 2`,
		`oaat_item_runs_total{group="backups",item="/srv/photos",namespace="ns",result="succeeded"} 1`,
	)
	if got := testutil.CollectAndCount(m.items, "oaat_item_run_duration_seconds"); got != 2 {
		t.Fatalf("%d duration series, want one per result", got)
	}
	wantHist := `
# HELP oaat_item_run_duration_seconds Duration of finished item runs, from the pod's start to its end.
# TYPE oaat_item_run_duration_seconds histogram
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="1"} 0
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="2"} 0
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="5"} 0
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="10"} 0
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="30"} 0
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="60"} 0
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="120"} 1
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="300"} 1
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="600"} 1
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="1200"} 1
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="1800"} 1
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="3600"} 1
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="7200"} 1
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="14400"} 1
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="28800"} 1
oaat_item_run_duration_seconds_bucket{group="backups",item="/srv/photos",namespace="ns",result="succeeded",le="+Inf"} 1
oaat_item_run_duration_seconds_sum{group="backups",item="/srv/photos",namespace="ns",result="succeeded"} 90
oaat_item_run_duration_seconds_count{group="backups",item="/srv/photos",namespace="ns",result="succeeded"} 1
`
	m2 := NewRunMetrics()
	m2.Observe("ns", "backups", "/srv/photos", "succeeded", 90*time.Second)
	if err := testutil.CollectAndCompare(m2.items, strings.NewReader(wantHist), "oaat_item_run_duration_seconds"); err != nil {
		t.Fatal(err)
	}
}

func TestRunMetricsForget(t *testing.T) {
	m := NewRunMetrics()
	m.Observe("ns", "gone", "a", "succeeded", time.Second)
	m.Observe("ns", "kept", "a", "failed", time.Second)
	m.Observe("other", "gone", "a", "succeeded", time.Second)
	m.OnDemandRun("ns", "gone", "rejected")
	m.OnDemandRun("ns", "kept", "succeeded")
	m.OnDemandRun("ns", "kept", "succeeded")
	m.RoundOverrun("ns", "gone")
	m.RoundOverrun("ns", "kept")
	m.Forget("ns", "gone")

	expectRunsTotal(t, m,
		`oaat_item_runs_total{group="gone",item="a",namespace="other",result="succeeded"} 1`,
		`oaat_item_runs_total{group="kept",item="a",namespace="ns",result="failed"} 1`,
	)
	if got := testutil.CollectAndCount(m.items, "oaat_item_run_duration_seconds"); got != 2 {
		t.Fatalf("%d duration series left, want 2", got)
	}
	wantRequests := `
# HELP oaat_on_demand_runs_total On-demand runs (OaatRuns) that reached a final phase, by result: succeeded, failed or rejected.
# TYPE oaat_on_demand_runs_total counter
oaat_on_demand_runs_total{group="kept",namespace="ns",result="succeeded"} 2
`
	if err := testutil.CollectAndCompare(m.onDemand, strings.NewReader(wantRequests)); err != nil {
		t.Fatal(err)
	}
	wantOverruns := `
# HELP oaat_round_overruns_total Ticks of a group's spec.schedule that came while items of the previous round had not yet succeeded (the rounds merged).
# TYPE oaat_round_overruns_total counter
oaat_round_overruns_total{group="kept",namespace="ns"} 1
`
	if err := testutil.CollectAndCompare(m.overruns, strings.NewReader(wantOverruns)); err != nil {
		t.Fatal(err)
	}
}

// An item removed from a group (its status entry gone) loses its run series; the group's other
// items, the same item of another group and the group's on-demand counts keep theirs.
func TestRunMetricsRetainItems(t *testing.T) {
	m := NewRunMetrics()
	m.Observe("ns", "backups", "kept", "succeeded", time.Second)
	m.Observe("ns", "backups", "rotated", "failed", time.Second)
	m.Observe("ns", "backups", "rotated", "succeeded", time.Second)
	m.Observe("ns", "other", "rotated", "succeeded", time.Second)
	m.OnDemandRun("ns", "backups", "succeeded")

	m.RetainItems("ns", "backups", func(item string) bool { return item == "kept" })
	wantSeries := map[string]int{"total": 2, "duration": 2, "on demand": 1}
	gotSeries := map[string]int{
		"total":     testutil.CollectAndCount(m.items, "oaat_item_runs_total"),
		"duration":  testutil.CollectAndCount(m.items, "oaat_item_run_duration_seconds"),
		"on demand": testutil.CollectAndCount(m.onDemand),
	}
	if !maps.Equal(gotSeries, wantSeries) {
		t.Fatalf("series %v, want %v (kept and the other group's item, the on-demand count)", gotSeries, wantSeries)
	}
	expectRunsTotal(t, m,
		`oaat_item_runs_total{group="backups",item="kept",namespace="ns",result="succeeded"} 1`,
		`oaat_item_runs_total{group="other",item="rotated",namespace="ns",result="succeeded"} 1`,
	)

	// An item that comes back gets new series.
	m.Observe("ns", "backups", "rotated", "succeeded", time.Second)
	if got := testutil.CollectAndCount(m.items, "oaat_item_runs_total"); got != 3 {
		t.Fatalf("%d run series after the item came back, want 3", got)
	}
}

// The probes of a group's breaker are counted by result, and go with the group.
func TestRunMetricsProbes(t *testing.T) {
	m := NewRunMetrics()
	m.Probe("ns", "backups", "failed")
	m.Probe("ns", "backups", "failed")
	m.Probe("ns", "backups", "succeeded")
	m.Probe("ns", "gone", "failed")
	m.Forget("ns", "gone")
	want := `
# HELP oaat_circuit_breaker_probes_total Probes of a group's open circuit breaker (spec.circuitBreaker) that ended, by result: succeeded (it closed the breaker) or failed.
# TYPE oaat_circuit_breaker_probes_total counter
oaat_circuit_breaker_probes_total{group="backups",namespace="ns",result="failed"} 2
oaat_circuit_breaker_probes_total{group="backups",namespace="ns",result="succeeded"} 1
`
	if err := testutil.CollectAndCompare(m.probes, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// expectRunsTotal fails the test unless m's oaat_item_runs_total series are exactly series, each
// a line of the text exposition format.
func expectRunsTotal(t *testing.T, m *RunMetrics, series ...string) {
	t.Helper()
	want := "# HELP oaat_item_runs_total Finished item runs.\n# TYPE oaat_item_runs_total counter\n" + strings.Join(series, "\n") + "\n"
	if err := testutil.CollectAndCompare(m.items, strings.NewReader(want), "oaat_item_runs_total"); err != nil {
		t.Fatal(err)
	}
}
