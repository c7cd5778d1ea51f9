package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/oaat-io/oaat-operator/internal/version"
)

// RunMetrics counts finished runs and on-demand runs and observes run durations.
type RunMetrics struct {
	items    *itemRunCollector
	onDemand *prometheus.CounterVec
	overruns *prometheus.CounterVec
	probes   *prometheus.CounterVec
	lost     *prometheus.CounterVec
}

// groupKey names a group.
type groupKey struct{ namespace, group string }

// NewRunMetrics makes the run metrics; Register makes them visible.
func NewRunMetrics() *RunMetrics {
	return &RunMetrics{
		items: newItemRunCollector(),
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
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oaat_group_histories_lost_total",
			Help: "Deleted groups that went without their OaatGroupHistory because the API server refused it, by reason: Unauthorized (the operator may not create it) or Refused (refused for longer than --history-refusal-wait).",
		}, []string{"namespace", "reason"}),
	}
}

// HistoryLost counts a deleted group that went without its OaatGroupHistory; reason is
// history.LostUnauthorized or history.LostRefused. The series outlives the group: it is a
// namespace's count, not the group's.
func (m *RunMetrics) HistoryLost(namespace, reason string) {
	m.lost.WithLabelValues(namespace, reason).Inc()
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
	m.items.observe(groupKey{namespace, group}, item, result, d, time.Now())
}

// RetainItems drops the run series of the group's items for which has is false: items whose
// status entry is gone (removed from the group, for example by a ConfigMap rotation), so that
// items that come and go leave no series behind. The reconciler calls it with the persisted
// status, so that a series goes only once the entry's removal is written.
func (m *RunMetrics) RetainItems(namespace, group string, has func(item string) bool) {
	m.items.retain(groupKey{namespace, group}, has)
}

// Forget drops the run series of a group that no longer exists, so that groups that come and go
// leave no series behind.
func (m *RunMetrics) Forget(namespace, group string) {
	m.items.forget(groupKey{namespace, group})
	labels := prometheus.Labels{"namespace": namespace, "group": group}
	m.onDemand.DeletePartialMatch(labels)
	m.overruns.DeletePartialMatch(labels)
	m.probes.DeletePartialMatch(labels)
}

// Register registers the run metrics, the status collector and the running build's
// oaat_build_info with reg.
func Register(reg prometheus.Registerer, runs *RunMetrics, status *StatusCollector) error {
	for _, c := range []prometheus.Collector{runs.items, runs.onDemand, runs.overruns, runs.probes, runs.lost, status, newBuildInfo(version.Get())} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
