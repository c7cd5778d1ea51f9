// Package metrics defines oaat-operator's Prometheus metrics. Their names and labels are part of
// the operator's contract (see docs/metrics-and-alerts.md).
//
// Run metrics (RunMetrics) are observed by the reconciler once per finished run, after the
// run's outcome is persisted in the group's status. Metrics derived from status (StatusCollector)
// are computed from the manager's cache at scrape time, so that deleted groups and removed items
// leave no stale series. oaat_build_info says which build of the operator runs.
package metrics
