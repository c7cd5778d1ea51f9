package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestLockCollectorAndWait(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	lock := builders.Lock("nas", 2, builders.Holder("photos", "p", builders.At(0)))
	lock.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	lock.Status.WaitingGroups, lock.Status.CircuitBreaker = 3, &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen}
	// A window of 5 slots by night, of none now: the lock's reconciler wrote 0 in force.
	lock.Spec.CapacitySchedule = []v1alpha1.CapacityWindow{
		{Start: "22:00", End: "06:00", Capacity: ptr.To[int32](5)}, {Start: "08:00", End: "18:00", Capacity: ptr.To[int32](0)}}
	lock.Status.CapacityInForce = ptr.To[int32](0)
	inA, inB := builders.Holder("photos", "p", builders.At(0)), builders.Holder("photos", "p", builders.At(0))
	inA.Namespace, inB.Namespace, inB.Slots = "a", "b", 2
	clusterLock := builders.ClusterLock("nas", 0, inA, inB)
	// Adaptive: 2 of its capacity in use; the OaatLock has no spec.adaptive and no gauge.
	clusterLock.Spec.Adaptive = &v1alpha1.AdaptiveCapacity{Max: 4}
	clusterLock.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: 3, CapacityInUse: 2}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(lock, clusterLock).Build()
	locks := NewLockMetrics()
	reg := prometheus.NewRegistry()
	if err := RegisterLocks(reg, locks, NewLockCollector(reader)); err != nil {
		t.Fatal(err)
	}
	locks.ObserveWait("ns", "nas", 90*time.Second)
	var nilMetrics *LockMetrics
	nilMetrics.ObserveWait("ns", "nas", time.Second) // observes nothing, does not panic

	want := `
# HELP oaat_lock_adaptive_capacity Slots the OaatLock or ClusterOaatLock with spec.adaptive grants now: status.adaptive.capacityInUse (its adaptive capacity, at most oaat_lock_capacity, 1 while a breaker is open); absent for a lock without spec.adaptive or before its reconciler has written it.
# TYPE oaat_lock_adaptive_capacity gauge
oaat_lock_adaptive_capacity{lock="nas",namespace=""} 2
# HELP oaat_lock_capacity Slots of the OaatLock or ClusterOaatLock now: status.capacityInForce (spec.capacity, or the capacity of the window of spec.capacitySchedule open now), spec.capacity until the lock's reconciler has written it.
# TYPE oaat_lock_capacity gauge
oaat_lock_capacity{lock="nas",namespace=""} 1
oaat_lock_capacity{lock="nas",namespace="ns"} 0
# HELP oaat_lock_capacity_max The most slots the OaatLock or ClusterOaatLock gives at any time: the largest of spec.capacity and the capacities of spec.capacitySchedule. Runs above oaat_lock_capacity and within this drain after a scheduled cut.
# TYPE oaat_lock_capacity_max gauge
oaat_lock_capacity_max{lock="nas",namespace=""} 1
oaat_lock_capacity_max{lock="nas",namespace="ns"} 5
# HELP oaat_lock_circuit_breaker_open 1 while the circuit breaker the OaatLock or ClusterOaatLock carries for the groups naming it (spec.circuitBreaker: Shared) is open, 0 while it is closed; absent for a lock that carries none.
# TYPE oaat_lock_circuit_breaker_open gauge
oaat_lock_circuit_breaker_open{lock="nas",namespace="ns"} 1
# HELP oaat_lock_holders Runs holding a slot of the OaatLock, or of the ClusterOaatLock when namespace is empty.
# TYPE oaat_lock_holders gauge
oaat_lock_holders{lock="nas",namespace=""} 2
oaat_lock_holders{lock="nas",namespace="ns"} 1
# HELP oaat_lock_slots_used Slots the holders of the OaatLock or ClusterOaatLock take: each holder's spec.lockOptions slots, 1 when absent (an exclusive holder counts 1: nothing is granted beside it).
# TYPE oaat_lock_slots_used gauge
oaat_lock_slots_used{lock="nas",namespace=""} 3
oaat_lock_slots_used{lock="nas",namespace="ns"} 1
# HELP oaat_lock_waiting_groups Groups waiting for a slot of the OaatLock or ClusterOaatLock (status.waitingGroups).
# TYPE oaat_lock_waiting_groups gauge
oaat_lock_waiting_groups{lock="nas",namespace=""} 0
oaat_lock_waiting_groups{lock="nas",namespace="ns"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"oaat_lock_adaptive_capacity", "oaat_lock_capacity", "oaat_lock_capacity_max", "oaat_lock_circuit_breaker_open", "oaat_lock_holders", "oaat_lock_slots_used", "oaat_lock_waiting_groups"); err != nil {
		t.Error(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "oaat_lock_wait_seconds" {
			continue
		}
		h := f.GetMetric()[0].GetHistogram()
		if len(f.GetMetric()) != 1 || h.GetSampleCount() != 1 || h.GetSampleSum() != 90 {
			t.Errorf("oaat_lock_wait_seconds: %d series, count %d, sum %v; want one wait of 90 s",
				len(f.GetMetric()), h.GetSampleCount(), h.GetSampleSum())
		}
		return
	}
	t.Error("no oaat_lock_wait_seconds")
}
