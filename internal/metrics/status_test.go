package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

var now = builders.T0

// ts is the time ago before now.
func ts(ago time.Duration) *metav1.Time { return builders.At(-ago) }

// groups collects the gauges of fixed groups, as StatusCollector does with the groups it lists.
type groups []*v1alpha1.OaatGroup

func (g groups) Describe(ch chan<- *prometheus.Desc) { (&StatusCollector{}).Describe(ch) }
func (g groups) Collect(ch chan<- prometheus.Metric) {
	for _, group := range g {
		collectGroup(ch, group, now)
	}
}

func TestCollectGroup(t *testing.T) {
	g := builders.Group("a", "fresh", "never", "done").Created(-3*time.Hour).
		ItemStatus(v1alpha1.ItemStatus{Name: "a", LastSuccess: ts(90 * time.Minute), LastFailure: ts(time.Minute), FailureCount: 2}).
		ItemStatus(v1alpha1.ItemStatus{Name: "fresh", LastSuccess: ts(time.Minute)}).
		ItemStatus(v1alpha1.ItemStatus{Name: "never", FailureCount: 3, WaitReason: v1alpha1.WaitParked}).
		ItemStatus(v1alpha1.ItemStatus{Name: "done", LastSuccess: ts(3 * time.Hour), WaitReason: v1alpha1.WaitDone}).
		RunningIn("a", "", ts(42*time.Second)).Obj()
	idle := builders.Group().Named("idle").Frequency("bad").Obj()
	want := `
# HELP oaat_group_frequency_seconds How often each item of the group should succeed; absent while the frequency is invalid, and for a group with spec.schedule.
# TYPE oaat_group_frequency_seconds gauge
oaat_group_frequency_seconds{group="backups",namespace="ns"} 3600
# HELP oaat_group_running 1 while an item pod of the group runs, else 0.
# TYPE oaat_group_running gauge
oaat_group_running{group="backups",namespace="ns"} 1
oaat_group_running{group="idle",namespace="ns"} 0
# HELP oaat_item_failures_since_success Failed runs of the item since its last successful one.
# TYPE oaat_item_failures_since_success gauge
oaat_item_failures_since_success{group="backups",item="a",namespace="ns"} 2
oaat_item_failures_since_success{group="backups",item="done",namespace="ns"} 0
oaat_item_failures_since_success{group="backups",item="fresh",namespace="ns"} 0
oaat_item_failures_since_success{group="backups",item="never",namespace="ns"} 3
# HELP oaat_item_last_failure_timestamp_seconds When the item's last failed run ended, in seconds since the epoch; absent when it never failed.
# TYPE oaat_item_last_failure_timestamp_seconds gauge
oaat_item_last_failure_timestamp_seconds{group="backups",item="a",namespace="ns"} 1.79526234e+09
# HELP oaat_item_last_success_timestamp_seconds When the item's last successful run ended, in seconds since the epoch; absent when it never succeeded.
# TYPE oaat_item_last_success_timestamp_seconds gauge
oaat_item_last_success_timestamp_seconds{group="backups",item="a",namespace="ns"} 1.795257e+09
oaat_item_last_success_timestamp_seconds{group="backups",item="done",namespace="ns"} 1.7952516e+09
oaat_item_last_success_timestamp_seconds{group="backups",item="fresh",namespace="ns"} 1.79526234e+09
# HELP oaat_item_overdue_seconds How far the item is past due: the time since its last success (or, never successful, since the group was created) minus the frequency; with spec.schedule, the time since the start of the round after the one that made it due; 0 when not due or done (mode EachOnce).
# TYPE oaat_item_overdue_seconds gauge
oaat_item_overdue_seconds{group="backups",item="a",namespace="ns"} 1800
oaat_item_overdue_seconds{group="backups",item="done",namespace="ns"} 0
oaat_item_overdue_seconds{group="backups",item="fresh",namespace="ns"} 0
oaat_item_overdue_seconds{group="backups",item="never",namespace="ns"} 7200
# HELP oaat_item_parked 1 while the item is parked (after an exit code of spec.exitCodes.doNotRetry, or once its failures reached spec.maxConsecutiveFailures): it does not run until the spec changes, the group is reset or an OaatRun of it runs; else 0.
# TYPE oaat_item_parked gauge
oaat_item_parked{group="backups",item="a",namespace="ns"} 0
oaat_item_parked{group="backups",item="done",namespace="ns"} 0
oaat_item_parked{group="backups",item="fresh",namespace="ns"} 0
oaat_item_parked{group="backups",item="never",namespace="ns"} 1
# HELP oaat_item_running_seconds How long the item's current run has been going; present only while it runs.
# TYPE oaat_item_running_seconds gauge
oaat_item_running_seconds{group="backups",item="a",namespace="ns"} 42
`
	if err := testutil.CollectAndCompare(groups{g, idle}, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// A scheduled group's item is overdue once the round after the one that made it due has started:
// daily at 01:00 UTC, at 12:00 an item that last succeeded two days ago at 02:00 was made due at
// yesterday's 01:00 and is overdue since today's, 11 hours; one that succeeded yesterday at 02:00
// is due since today's 01:00 and not overdue. A group without frequency has the default 1h.
func TestCollectScheduledGroup(t *testing.T) {
	scheduled := builders.Group("late", "due", "done").Named("nightly").Created(-10*24*time.Hour).Schedule("0 1 * * *", "").
		ItemStatus(v1alpha1.ItemStatus{Name: "late", LastSuccess: ts(2*24*time.Hour + 10*time.Hour)}).
		ItemStatus(v1alpha1.ItemStatus{Name: "due", LastSuccess: ts(24*time.Hour + 10*time.Hour)}).
		ItemStatus(v1alpha1.ItemStatus{Name: "done", LastSuccess: ts(10 * time.Hour)}).Obj()
	fresh := builders.Group("never").Named("new").Created(-2*time.Hour).Schedule("0 1 * * *", "").
		ItemStatus(v1alpha1.ItemStatus{Name: "never"}).Obj()
	badZone := builders.Group("x").Named("bad").Schedule("@daily", "Mars/Olympus").ItemStatus(v1alpha1.ItemStatus{Name: "x"}).Obj()
	defaulted := builders.Group("never").Named("hourly").Created(-3 * time.Hour).Frequency("").
		ItemStatus(v1alpha1.ItemStatus{Name: "never"}).Obj()
	want := `
# HELP oaat_group_frequency_seconds How often each item of the group should succeed; absent while the frequency is invalid, and for a group with spec.schedule.
# TYPE oaat_group_frequency_seconds gauge
oaat_group_frequency_seconds{group="hourly",namespace="ns"} 3600
# HELP oaat_item_overdue_seconds How far the item is past due: the time since its last success (or, never successful, since the group was created) minus the frequency; with spec.schedule, the time since the start of the round after the one that made it due; 0 when not due or done (mode EachOnce).
# TYPE oaat_item_overdue_seconds gauge
oaat_item_overdue_seconds{group="hourly",item="never",namespace="ns"} 7200
oaat_item_overdue_seconds{group="new",item="never",namespace="ns"} 0
oaat_item_overdue_seconds{group="nightly",item="done",namespace="ns"} 0
oaat_item_overdue_seconds{group="nightly",item="due",namespace="ns"} 0
oaat_item_overdue_seconds{group="nightly",item="late",namespace="ns"} 39600
`
	if err := testutil.CollectAndCompare(groups{scheduled, fresh, badZone, defaulted}, strings.NewReader(want),
		"oaat_group_frequency_seconds", "oaat_item_overdue_seconds"); err != nil {
		t.Fatal(err)
	}
}

// A group with a circuit breaker has its state as a gauge, 1 while open; a group without one has
// no series.
func TestCollectBreaker(t *testing.T) {
	group := func(name string, cb *v1alpha1.CircuitBreakerStatus) *v1alpha1.OaatGroup {
		g := builders.Group().Named(name).Obj()
		g.Status.CircuitBreaker = cb
		return g
	}
	want := `
# HELP oaat_group_circuit_breaker_open 1 while the group's circuit breaker (spec.circuitBreaker) is open, 0 while it is closed; absent for a group without one.
# TYPE oaat_group_circuit_breaker_open gauge
oaat_group_circuit_breaker_open{group="closed",namespace="ns"} 0
oaat_group_circuit_breaker_open{group="open",namespace="ns"} 1
`
	gs := groups{
		group("open", &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen}),
		group("closed", &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed}),
		group("without", nil),
	}
	if err := testutil.CollectAndCompare(gs, strings.NewReader(want), "oaat_group_circuit_breaker_open"); err != nil {
		t.Fatal(err)
	}
}

// TestCollectVerification: with spec.verify, the age of each item's newest verified result and
// whether its newest verification failed; without it, neither.
func TestCollectVerification(t *testing.T) {
	g := builders.Group("ok", "failing", "new").
		ItemStatus(v1alpha1.ItemStatus{Name: "ok", LastVerified: ts(time.Hour), VerifiedRunFinishedAt: ts(2 * time.Hour), LastVerifyFailure: ts(3 * time.Hour)}).
		ItemStatus(v1alpha1.ItemStatus{Name: "failing", LastVerified: ts(3 * time.Hour), VerifiedRunFinishedAt: ts(4 * time.Hour), LastVerifyFailure: ts(time.Hour)}).
		ItemStatus(v1alpha1.ItemStatus{Name: "new"}).Obj()
	g.Spec.Verify = &v1alpha1.Verify{OaatType: "checker"}
	unverified := builders.Group("x").Named("plain").ItemStatus(v1alpha1.ItemStatus{Name: "x", LastVerifyFailure: ts(time.Hour)}).Obj()
	want := `
# HELP oaat_item_last_verified_timestamp_seconds When the run that the item's newest successful verification (spec.verify) verified ended, in seconds since the epoch: the age of its newest verified result; absent when none was verified.
# TYPE oaat_item_last_verified_timestamp_seconds gauge
oaat_item_last_verified_timestamp_seconds{group="backups",item="failing",namespace="ns"} 1.795248e+09
oaat_item_last_verified_timestamp_seconds{group="backups",item="ok",namespace="ns"} 1.7952552e+09
# HELP oaat_item_verification_failing 1 while the item's newest verification (spec.verify) failed, else 0; present for the groups with spec.verify.
# TYPE oaat_item_verification_failing gauge
oaat_item_verification_failing{group="backups",item="failing",namespace="ns"} 1
oaat_item_verification_failing{group="backups",item="new",namespace="ns"} 0
oaat_item_verification_failing{group="backups",item="ok",namespace="ns"} 0
`
	if err := testutil.CollectAndCompare(groups{g, unverified}, strings.NewReader(want),
		"oaat_item_last_verified_timestamp_seconds", "oaat_item_verification_failing"); err != nil {
		t.Error(err)
	}
}

// The ratio of an item's newest kept run to the median of the runs before it, for the items whose
// newest run can be judged (3 runs before it, a median of 10 s or more), whatever the verdict.
func TestCollectRunRatio(t *testing.T) {
	g := builders.Group("short", "usual", "long", "few", "quick", "never").
		ItemStatus(v1alpha1.ItemStatus{Name: "short", RecentRunSeconds: []int64{50, 50, 50, 1}}).
		ItemStatus(v1alpha1.ItemStatus{Name: "usual", RecentRunSeconds: []int64{60, 40, 50, 50, 45}}).
		ItemStatus(v1alpha1.ItemStatus{Name: "long", RecentRunSeconds: []int64{20, 600, 20, 20, 70}}).
		ItemStatus(v1alpha1.ItemStatus{Name: "few", RecentRunSeconds: []int64{50, 50, 1}}).
		ItemStatus(v1alpha1.ItemStatus{Name: "quick", RecentRunSeconds: []int64{2, 3, 2, 0}}).
		ItemStatus(v1alpha1.ItemStatus{Name: "never"}).Obj()
	want := `
# HELP oaat_item_last_run_duration_ratio The item's newest kept run duration (status.items[].recentRunSeconds) over the median of the runs kept before it; present when at least 3 came before it and their median is 10 s or more. The operator calls a run under 0.1 unusually short and one over 3 unusually long (condition UnusualRuns), as alerts OaatItemRunTooShort and OaatItemRunTooLong do.
# TYPE oaat_item_last_run_duration_ratio gauge
oaat_item_last_run_duration_ratio{group="backups",item="long",namespace="ns"} 3.5
oaat_item_last_run_duration_ratio{group="backups",item="short",namespace="ns"} 0.02
oaat_item_last_run_duration_ratio{group="backups",item="usual",namespace="ns"} 0.9
`
	if err := testutil.CollectAndCompare(groups{g}, strings.NewReader(want), "oaat_item_last_run_duration_ratio"); err != nil {
		t.Error(err)
	}
}
