package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// runBuckets spread from a second to eight hours: item runs range from quick checks to backups.
var runBuckets = []float64{1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800}

// RunMetrics counts finished runs and on-demand requests and observes run durations.
type RunMetrics struct {
	duration *prometheus.HistogramVec
	total    *prometheus.CounterVec
	onDemand *prometheus.CounterVec
}

// NewRunMetrics makes the run metrics; Register makes them visible.
func NewRunMetrics() *RunMetrics {
	labels := []string{"namespace", "group", "item", "result"}
	return &RunMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "oaat_item_run_duration_seconds",
			Help:    "Duration of finished item runs, from the pod's start to its end.",
			Buckets: runBuckets,
		}, labels),
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oaat_item_runs_total",
			Help: "Finished item runs.",
		}, labels),
		onDemand: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oaat_on_demand_runs_total",
			Help: "On-demand run requests (OaatRuns) that reached a final phase, by result: succeeded, failed or rejected.",
		}, []string{"namespace", "group", "result"}),
	}
}

// Request counts an on-demand request that reached its final phase; result is succeeded,
// failed or rejected.
func (m *RunMetrics) Request(namespace, group, result string) {
	m.onDemand.WithLabelValues(namespace, group, result).Inc()
}

// Observe records one finished run; result is succeeded, failed or interrupted.
func (m *RunMetrics) Observe(namespace, group, item, result string, d time.Duration) {
	m.duration.WithLabelValues(namespace, group, item, result).Observe(d.Seconds())
	m.total.WithLabelValues(namespace, group, item, result).Inc()
}

// Forget drops the run series of a group that no longer exists, so that groups that come and go
// leave no series behind.
func (m *RunMetrics) Forget(namespace, group string) {
	labels := prometheus.Labels{"namespace": namespace, "group": group}
	m.duration.DeletePartialMatch(labels)
	m.total.DeletePartialMatch(labels)
	m.onDemand.DeletePartialMatch(labels)
}

// Register registers the run metrics and the status collector with reg.
func Register(reg prometheus.Registerer, runs *RunMetrics, status *StatusCollector) error {
	for _, c := range []prometheus.Collector{runs.duration, runs.total, runs.onDemand, status} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
