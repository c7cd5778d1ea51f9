package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// NotifyMetrics counts the CloudEvents the notifier sends and the transitions dropped unsent. A
// nil *NotifyMetrics counts nothing.
type NotifyMetrics struct {
	sent    *prometheus.CounterVec
	dropped *prometheus.CounterVec
}

// NewNotifyMetrics makes the notification metrics; RegisterNotify makes them visible.
func NewNotifyMetrics() *NotifyMetrics {
	return &NotifyMetrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oaat_notifications_total",
			Help: "CloudEvents sent, by sink (cluster: --notify-sink, group: spec.notify.sink) and result (delivered: the sink acknowledged it, failed: it is retried).",
		}, []string{"sink", "result"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oaat_notifications_dropped_total",
			Help: "Transitions pushed out of a group's status.notifications.pending unsent, while its sinks acknowledged none of the last 32.",
		}, []string{"namespace", "group"}),
	}
}

// RegisterNotify registers the notification metrics with reg.
func RegisterNotify(reg prometheus.Registerer, m *NotifyMetrics) error {
	for _, c := range []prometheus.Collector{m.sent, m.dropped} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Observe counts a delivery to a sink of that scope.
func (m *NotifyMetrics) Observe(scope string, delivered bool) {
	if m == nil {
		return
	}
	result := "failed"
	if delivered {
		result = "delivered"
	}
	m.sent.WithLabelValues(scope, result).Inc()
}

// Dropped counts n transitions of the group dropped unsent.
func (m *NotifyMetrics) Dropped(namespace, group string, n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.dropped.WithLabelValues(namespace, group).Add(float64(n))
}
