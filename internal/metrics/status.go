package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/runstats"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// listTimeout bounds the cache read of one scrape.
const listTimeout = 10 * time.Second

var (
	itemLabels   = []string{"namespace", "group", "item"}
	failuresDesc = prometheus.NewDesc("oaat_item_failures_since_success",
		"Failed runs of the item since its last successful one.", itemLabels, nil)
	lastSuccessDesc = prometheus.NewDesc("oaat_item_last_success_timestamp_seconds",
		"When the item's last successful run ended, in seconds since the epoch; absent when it never succeeded.", itemLabels, nil)
	lastFailureDesc = prometheus.NewDesc("oaat_item_last_failure_timestamp_seconds",
		"When the item's last failed run ended, in seconds since the epoch; absent when it never failed.", itemLabels, nil)
	overdueDesc = prometheus.NewDesc("oaat_item_overdue_seconds",
		"How far the item is past due: the time since its last success (or, never successful, since the group was created) minus the frequency; with spec.schedule, the time since the start of the round after the one that made it due; 0 when not due or done (mode EachOnce).", itemLabels, nil)
	runningDesc = prometheus.NewDesc("oaat_group_running",
		"1 while an item pod of the group runs, else 0.", []string{"namespace", "group"}, nil)
	frequencyDesc = prometheus.NewDesc("oaat_group_frequency_seconds",
		"How often each item of the group should succeed; absent while the frequency is invalid, and for a group with spec.schedule.", []string{"namespace", "group"}, nil)
	breakerOpenDesc = prometheus.NewDesc("oaat_group_circuit_breaker_open",
		"1 while the group's circuit breaker (spec.circuitBreaker) is open, 0 while it is closed; absent for a group without one.", []string{"namespace", "group"}, nil)
	parkedDesc = prometheus.NewDesc("oaat_item_parked",
		"1 while the item is parked (after an exit code of spec.exitCodes.doNotRetry, or once its failures reached spec.maxConsecutiveFailures): it does not run until the spec changes, the group is reset or an OaatRun of it runs; else 0.", itemLabels, nil)
	lastVerifiedDesc = prometheus.NewDesc("oaat_item_last_verified_timestamp_seconds",
		"When the run that the item's newest successful verification (spec.verify) verified ended, in seconds since the epoch: the age of its newest verified result; absent when none was verified.", itemLabels, nil)
	verificationFailingDesc = prometheus.NewDesc("oaat_item_verification_failing",
		"1 while the item's newest verification (spec.verify) failed, else 0; present for the groups with spec.verify.", itemLabels, nil)
	runRatioDesc = prometheus.NewDesc("oaat_item_last_run_duration_ratio",
		"The item's newest kept run duration (status.items[].recentRunSeconds) over the median of the runs kept before it; present when at least 3 came before it and their median is 10 s or more. The operator calls a run under 0.1 unusually short and one over 3 unusually long (condition UnusualRuns), as alerts OaatItemRunTooShort and OaatItemRunTooLong do.", itemLabels, nil)
	runSecondsDesc = prometheus.NewDesc("oaat_item_running_seconds",
		"How long the item's current run has been going; present only while it runs.", itemLabels, nil)
)

// StatusCollector reports the groups' status as gauges, read from a cache at scrape time.
type StatusCollector struct {
	reader client.Reader
	clock  clock.PassiveClock
}

// NewStatusCollector makes a collector that lists OaatGroups from reader.
func NewStatusCollector(reader client.Reader, clk clock.PassiveClock) *StatusCollector {
	return &StatusCollector{reader: reader, clock: clk}
}

// Describe sends the descriptions of the gauges.
func (c *StatusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{failuresDesc, lastSuccessDesc, lastFailureDesc, overdueDesc, runningDesc, frequencyDesc, runSecondsDesc, breakerOpenDesc, atRiskDesc, parkedDesc, lastVerifiedDesc, verificationFailingDesc, runRatioDesc} {
		ch <- d
	}
}

// Collect sends the gauges of every group and item.
func (c *StatusCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	groups := &v1alpha1.OaatGroupList{}
	if err := c.reader.List(ctx, groups); err != nil {
		log.Log.WithName("metrics").Error(err, "Cannot list OaatGroups for the status metrics")
		ch <- prometheus.NewInvalidMetric(runningDesc, err)
		return
	}
	now := c.clock.Now()
	for i := range groups.Items {
		collectGroup(ch, &groups.Items[i], now)
	}
}

func collectGroup(ch chan<- prometheus.Metric, g *v1alpha1.OaatGroup, now time.Time) {
	running := 0.0
	if cr := g.Status.CurrentRun; cr != nil {
		running = 1
		ch <- prometheus.MustNewConstMetric(runSecondsDesc, prometheus.GaugeValue,
			max(now.Sub(cr.StartedAt.Time), 0).Seconds(), g.Namespace, g.Name, cr.Item)
	}
	ch <- prometheus.MustNewConstMetric(runningDesc, prometheus.GaugeValue, running, g.Namespace, g.Name)
	if cb := g.Status.CircuitBreaker; cb != nil {
		ch <- prometheus.MustNewConstMetric(breakerOpenDesc, prometheus.GaugeValue, boolGauge(cb.State == v1alpha1.BreakerOpen), g.Namespace, g.Name)
	}
	collectForecast(ch, g)

	overdue, ok := overdueOf(g, now)
	if ok && g.Spec.Schedule == "" {
		frequency, _ := groupspec.Frequency(g)
		ch <- prometheus.MustNewConstMetric(frequencyDesc, prometheus.GaugeValue, frequency.Seconds(), g.Namespace, g.Name)
	}
	for _, it := range g.Status.Items {
		labels := []string{g.Namespace, g.Name, it.Name}
		ch <- prometheus.MustNewConstMetric(failuresDesc, prometheus.GaugeValue, float64(it.FailureCount), labels...)
		ch <- prometheus.MustNewConstMetric(parkedDesc, prometheus.GaugeValue, boolGauge(it.WaitReason == v1alpha1.WaitParked), labels...)
		if it.LastSuccess != nil {
			ch <- prometheus.MustNewConstMetric(lastSuccessDesc, prometheus.GaugeValue, epochSeconds(it.LastSuccess.Time), labels...)
		}
		if it.LastFailure != nil {
			ch <- prometheus.MustNewConstMetric(lastFailureDesc, prometheus.GaugeValue, epochSeconds(it.LastFailure.Time), labels...)
		}
		if ok {
			ch <- prometheus.MustNewConstMetric(overdueDesc, prometheus.GaugeValue, overdue(it).Seconds(), labels...)
		}
		if g.Spec.Verify != nil {
			collectVerification(ch, &it, labels)
		}
		if v := runstats.Newest(it.RecentRunSeconds); v.Judged {
			ch <- prometheus.MustNewConstMetric(runRatioDesc, prometheus.GaugeValue, v.Ratio(), labels...)
		}
	}
}

// collectVerification sends the gauges of the item's verifications (spec.verify).
func collectVerification(ch chan<- prometheus.Metric, it *v1alpha1.ItemStatus, labels []string) {
	if it.VerifiedRunFinishedAt != nil {
		ch <- prometheus.MustNewConstMetric(lastVerifiedDesc, prometheus.GaugeValue, epochSeconds(it.VerifiedRunFinishedAt.Time), labels...)
	}
	ch <- prometheus.MustNewConstMetric(verificationFailingDesc, prometheus.GaugeValue, boolGauge(it.VerificationFailing()), labels...)
}

// Overdue is how far past its frequency an item is at now: the time since its last success, or
// since created when it never succeeded, minus the frequency; zero when not due, and for an item
// that is done (mode EachOnce), which is not due again.
func Overdue(it v1alpha1.ItemStatus, created time.Time, frequency time.Duration, now time.Time) time.Duration {
	if it.WaitReason == v1alpha1.WaitDone {
		return 0
	}
	since := created
	if it.LastSuccess != nil {
		since = it.LastSuccess.Time
	}
	return max(now.Sub(since)-frequency, 0)
}

// overdueOf returns how far past due each item of the group is at now, by its schedule or its
// frequency, and false when the spec that says when items are due cannot be read.
func overdueOf(g *v1alpha1.OaatGroup, now time.Time) (func(v1alpha1.ItemStatus) time.Duration, bool) {
	created := g.CreationTimestamp.Time
	if g.Spec.Schedule != "" {
		cal, err := schedule.GroupCalendar(g)
		if err != nil {
			return nil, false
		}
		return func(it v1alpha1.ItemStatus) time.Duration {
			var last time.Time
			if it.LastSuccess != nil {
				last = it.LastSuccess.Time
			}
			return cal.Overdue(last, created, now)
		}, true
	}
	frequency, err := groupspec.Frequency(g)
	if err != nil {
		return nil, false
	}
	return func(it v1alpha1.ItemStatus) time.Duration { return Overdue(it, created, frequency, now) }, true
}

// boolGauge is 1 for true, 0 for false.
func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func epochSeconds(t time.Time) float64 {
	return float64(t.UnixNano()) / 1e9
}
