package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	lockspolicy "github.com/oaat-io/oaat-operator/internal/locks"
)

// lockWaitBuckets spread from no wait to a day: a lock shared by long backups can keep a group
// waiting for hours.
var lockWaitBuckets = []float64{0, 1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 14400, 28800, 86400}

var (
	lockLabels  = []string{"namespace", "lock"}
	holdersDesc = prometheus.NewDesc("oaat_lock_holders",
		"Runs holding a slot of the OaatLock, or of the ClusterOaatLock when namespace is empty.", lockLabels, nil)
	slotsDesc = prometheus.NewDesc("oaat_lock_slots_used",
		"Slots the holders of the OaatLock or ClusterOaatLock take: each holder's spec.lockOptions slots, 1 when absent (an exclusive holder counts 1: nothing is granted beside it).", lockLabels, nil)
	capacityDesc = prometheus.NewDesc("oaat_lock_capacity",
		"Slots of the OaatLock or ClusterOaatLock now: status.capacityInForce (spec.capacity, or the capacity of the window of spec.capacitySchedule open now), spec.capacity until the lock's reconciler has written it.", lockLabels, nil)
	capacityMaxDesc = prometheus.NewDesc("oaat_lock_capacity_max",
		"The most slots the OaatLock or ClusterOaatLock gives at any time: the largest of spec.capacity and the capacities of spec.capacitySchedule. Runs above oaat_lock_capacity and within this drain after a scheduled cut.", lockLabels, nil)
	waitingDesc = prometheus.NewDesc("oaat_lock_waiting_groups",
		"Groups waiting for a slot of the OaatLock or ClusterOaatLock (status.waitingGroups).", lockLabels, nil)
	adaptiveDesc = prometheus.NewDesc("oaat_lock_adaptive_capacity",
		"Slots the OaatLock or ClusterOaatLock with spec.adaptive grants now: status.adaptive.capacityInUse (its adaptive capacity, at most oaat_lock_capacity, 1 while a breaker is open); absent for a lock without spec.adaptive or before its reconciler has written it.", lockLabels, nil)
	lockBreakerOpenDesc = prometheus.NewDesc("oaat_lock_circuit_breaker_open",
		"1 while the circuit breaker the OaatLock or ClusterOaatLock carries for the groups naming it (spec.circuitBreaker: Shared) is open, 0 while it is closed; absent for a lock that carries none.", lockLabels, nil)
)

// LockMetrics observes how long groups waited for the locks they took. A nil *LockMetrics
// observes nothing.
type LockMetrics struct {
	wait *prometheus.HistogramVec
}

// NewLockMetrics makes the lock metrics; RegisterLocks makes them visible.
func NewLockMetrics() *LockMetrics {
	return &LockMetrics{wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "oaat_lock_wait_seconds",
		Help:    "How long a group waited for its locks before a run took a slot of this one (namespace empty for a ClusterOaatLock); 0 when it did not wait.",
		Buckets: lockWaitBuckets,
	}, lockLabels)}
}

// ObserveWait records that a run took a slot of the lock after the group waited d.
func (m *LockMetrics) ObserveWait(namespace, lock string, d time.Duration) {
	if m == nil {
		return
	}
	m.wait.WithLabelValues(namespace, lock).Observe(d.Seconds())
}

// LockCollector reports the locks' holders, the slots they take, capacity, adaptive capacity, waiting groups and carried breakers as gauges, read from a
// cache at scrape time, so that a deleted lock leaves no series behind.
type LockCollector struct {
	reader client.Reader
}

// NewLockCollector makes a collector that lists OaatLocks from reader.
func NewLockCollector(reader client.Reader) *LockCollector {
	return &LockCollector{reader: reader}
}

// Describe sends the descriptions of the gauges.
func (c *LockCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{holdersDesc, slotsDesc, capacityDesc, capacityMaxDesc, waitingDesc, adaptiveDesc, lockBreakerOpenDesc} {
		ch <- d
	}
}

// Collect sends the gauges of every lock: an OaatLock's with its namespace, a ClusterOaatLock's
// with namespace "" (no OaatLock has it), so that the series of both kinds never mix and no label
// is added.
func (c *LockCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	locks := &v1alpha1.OaatLockList{}
	clusterLocks := &v1alpha1.ClusterOaatLockList{}
	for _, list := range []client.ObjectList{locks, clusterLocks} {
		if err := c.reader.List(ctx, list); err != nil {
			log.Log.WithName("metrics").Error(err, "Cannot list the locks for the lock metrics")
			ch <- prometheus.NewInvalidMetric(holdersDesc, err)
			return
		}
	}
	all := make([]v1alpha1.Lock, 0, len(locks.Items)+len(clusterLocks.Items))
	for i := range locks.Items {
		all = append(all, &locks.Items[i])
	}
	for i := range clusterLocks.Items {
		all = append(all, &clusterLocks.Items[i])
	}
	for _, l := range all {
		labels := []string{l.GetNamespace(), l.GetName()}
		ch <- prometheus.MustNewConstMetric(holdersDesc, prometheus.GaugeValue, float64(len(l.LockHolders())), labels...)
		ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, float64(lockspolicy.UsedSlots(l.LockHolders())), labels...)
		ch <- prometheus.MustNewConstMetric(capacityDesc, prometheus.GaugeValue, float64(capacityNow(l)), labels...)
		ch <- prometheus.MustNewConstMetric(capacityMaxDesc, prometheus.GaugeValue, float64(lockspolicy.HighestCapacity(l)), labels...)
		ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(l.LockWaitingGroups()), labels...)
		if a := l.Adaptive().Adaptive; l.AdaptiveSpec() != nil && a != nil {
			ch <- prometheus.MustNewConstMetric(adaptiveDesc, prometheus.GaugeValue, float64(a.CapacityInUse), labels...)
		}
		if l.CarriesBreaker() {
			open := 0.0
			if cb := l.LockBreaker(); cb != nil && cb.State == v1alpha1.BreakerOpen {
				open = 1
			}
			ch <- prometheus.MustNewConstMetric(lockBreakerOpenDesc, prometheus.GaugeValue, open, labels...)
		}
	}
}

// capacityNow is status.capacityInForce, spec.capacity until the lock's reconciler has written it.
func capacityNow(l v1alpha1.Lock) int {
	if c := l.Capacity().CapacityInForce; c != nil {
		return int(*c)
	}
	return l.CapacityOrDefault()
}

// RegisterLocks registers the lock metrics and the lock collector with reg.
func RegisterLocks(reg prometheus.Registerer, locks *LockMetrics, collector *LockCollector) error {
	for _, c := range []prometheus.Collector{locks.wait, collector} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
