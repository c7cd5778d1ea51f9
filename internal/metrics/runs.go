package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// runBuckets spread from a second to eight hours: item runs range from quick checks to backups.
var runBuckets = []float64{1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800}

// RunMetrics counts finished runs and on-demand runs and observes run durations.
type RunMetrics struct {
	duration *prometheus.HistogramVec
	total    *prometheus.CounterVec
	onDemand *prometheus.CounterVec
	overruns *prometheus.CounterVec
	probes   *prometheus.CounterVec

	// mu guards items: the items that have run series, by group, so that the series of an item
	// removed from its group can be dropped.
	mu    sync.Mutex
	items map[groupKey]map[string]struct{}
}

// groupKey names a group.
type groupKey struct{ namespace, group string }

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
			Help: "On-demand runs (OaatRuns) that reached a final phase, by result: succeeded, failed or rejected.",
		}, []string{"namespace", "group", "result"}),
		overruns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oaat_round_overruns_total",
			Help: "Ticks of a group's spec.schedule that came while items of the previous round had not yet succeeded (the rounds merged).",
		}, []string{"namespace", "group"}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oaat_circuit_breaker_probes_total",
			Help: "Probes of a group's open circuit breaker (spec.circuitBreaker) that ended, by result: succeeded (it closed the breaker) or failed.",
		}, []string{"namespace", "group", "result"}),
		items: map[groupKey]map[string]struct{}{},
	}
}

// Probe counts a probe of a group's open circuit breaker that ended; result is succeeded or
// failed.
func (m *RunMetrics) Probe(namespace, group, result string) {
	m.probes.WithLabelValues(namespace, group, result).Inc()
}

// RoundOverrun counts a scheduled round that started while items of the previous one had not
// succeeded.
func (m *RunMetrics) RoundOverrun(namespace, group string) {
	m.overruns.WithLabelValues(namespace, group).Inc()
}

// OnDemandRun counts an on-demand run (an OaatRun) that reached its final phase; result is succeeded,
// failed or rejected.
func (m *RunMetrics) OnDemandRun(namespace, group, result string) {
	m.onDemand.WithLabelValues(namespace, group, result).Inc()
}

// Observe records one finished run; result is succeeded, failed or interrupted.
func (m *RunMetrics) Observe(namespace, group, item, result string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := groupKey{namespace, group}
	if m.items[key] == nil {
		m.items[key] = map[string]struct{}{}
	}
	m.items[key][item] = struct{}{}
	m.duration.WithLabelValues(namespace, group, item, result).Observe(d.Seconds())
	m.total.WithLabelValues(namespace, group, item, result).Inc()
}

// RetainItems drops the run series of the group's items for which has is false: items whose
// status entry is gone (removed from the group, for example by a ConfigMap rotation), so that
// items that come and go leave no series behind. The reconciler calls it with the persisted
// status, so that a series goes only once the entry's removal is written.
func (m *RunMetrics) RetainItems(namespace, group string, has func(item string) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := groupKey{namespace, group}
	for item := range m.items[key] {
		if has(item) {
			continue
		}
		labels := prometheus.Labels{"namespace": namespace, "group": group, "item": item}
		m.duration.DeletePartialMatch(labels)
		m.total.DeletePartialMatch(labels)
		delete(m.items[key], item)
	}
}

// Forget drops the run series of a group that no longer exists, so that groups that come and go
// leave no series behind.
func (m *RunMetrics) Forget(namespace, group string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, groupKey{namespace, group})
	labels := prometheus.Labels{"namespace": namespace, "group": group}
	m.duration.DeletePartialMatch(labels)
	m.total.DeletePartialMatch(labels)
	m.onDemand.DeletePartialMatch(labels)
	m.overruns.DeletePartialMatch(labels)
	m.probes.DeletePartialMatch(labels)
}

// Register registers the run metrics and the status collector with reg.
func Register(reg prometheus.Registerer, runs *RunMetrics, status *StatusCollector) error {
	for _, c := range []prometheus.Collector{runs.duration, runs.total, runs.onDemand, runs.overruns, runs.probes, status} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
