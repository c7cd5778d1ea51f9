package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// runBuckets spread from a second to eight hours: item runs range from quick checks to backups.
var runBuckets = []float64{1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800}

// RunMetrics counts finished runs and observes their durations.
type RunMetrics struct {
	duration *prometheus.HistogramVec
	total    *prometheus.CounterVec
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
	}
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
}

// Register registers the run metrics and the status collector with reg.
func Register(reg prometheus.Registerer, runs *RunMetrics, status *StatusCollector) error {
	for _, c := range []prometheus.Collector{runs.duration, runs.total, status} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
