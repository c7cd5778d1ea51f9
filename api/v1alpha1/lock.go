package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Lock is what an OaatLock and a ClusterOaatLock share: the operator takes and gives back their
// slots the same way.
// +kubebuilder:object:generate=false
type Lock interface {
	metav1.Object
	runtime.Object
	// CapacityOrDefault is spec.capacity, 1 when unset.
	CapacityOrDefault() int
	// CapacityWindows are spec.capacitySchedule.
	CapacityWindows() []CapacityWindow
	// Capacity is the capacity status: status.capacityInForce and status.nextCapacityChange.
	Capacity() *CapacityStatus
	// Bounds are what the groups naming the lock may ask in their spec.lockOptions.
	Bounds() LockBounds
	// Queue is the queue status: status.passedOver.
	Queue() *QueueStatus
	// AdaptiveSpec is spec.adaptive, nil without one.
	AdaptiveSpec() *AdaptiveCapacity
	// Adaptive is the adaptive status: status.adaptive.
	Adaptive() *AdaptiveStatus
	// LockHolders are status.holders.
	LockHolders() []LockHolder
	// SetLockHolders sets status.holders and status.holderCount.
	SetLockHolders(holders []LockHolder)
	// LockWaitingGroups is status.waitingGroups.
	LockWaitingGroups() int32
	// SetLockWaitingGroups sets status.waitingGroups.
	SetLockWaitingGroups(n int32)
	// LockKey names the lock among a group's locks: the name of an OaatLock,
	// KindClusterOaatLock/name of a ClusterOaatLock.
	LockKey() string
	// CarriesBreaker reports whether spec.circuitBreaker is Shared.
	CarriesBreaker() bool
	// LockBreaker is status.circuitBreaker.
	LockBreaker() *LockCircuitBreakerStatus
	// SetLockBreaker sets status.circuitBreaker.
	SetLockBreaker(cb *LockCircuitBreakerStatus)
}

// ClusterLockKey is the key of the ClusterOaatLock of that name among a group's locks.
func ClusterLockKey(name string) string { return KindClusterOaatLock + "/" + name }

// LockKeys are the keys of the locks a group names: spec.locks, then spec.clusterLocks.
func (s *OaatGroupSpec) LockKeys() []string {
	keys := make([]string, 0, len(s.Locks)+len(s.ClusterLocks))
	keys = append(keys, s.Locks...)
	for _, name := range s.ClusterLocks {
		keys = append(keys, ClusterLockKey(name))
	}
	return keys
}

// CarriesBreaker reports whether spec.circuitBreaker is Shared.
func (l *ClusterOaatLock) CarriesBreaker() bool { return l.Spec.CircuitBreaker == LockBreakerShared }

// LockBreaker is status.circuitBreaker.
func (l *ClusterOaatLock) LockBreaker() *LockCircuitBreakerStatus { return l.Status.CircuitBreaker }

// SetLockBreaker sets status.circuitBreaker.
func (l *ClusterOaatLock) SetLockBreaker(cb *LockCircuitBreakerStatus) { l.Status.CircuitBreaker = cb }

// CapacityOrDefault is spec.capacity, 1 when unset.
func (l *ClusterOaatLock) CapacityOrDefault() int { return max(int(l.Spec.Capacity), 1) }

// CapacityWindows are spec.capacitySchedule.
func (l *ClusterOaatLock) CapacityWindows() []CapacityWindow { return l.Spec.CapacitySchedule }

// Capacity is the capacity status.
func (l *ClusterOaatLock) Capacity() *CapacityStatus { return &l.Status.CapacityStatus }

// Bounds are what the groups naming the lock may ask in their spec.lockOptions.
func (l *ClusterOaatLock) Bounds() LockBounds { return l.Spec.LockBounds }

// Queue is the queue status: status.passedOver.
func (l *ClusterOaatLock) Queue() *QueueStatus { return &l.Status.QueueStatus }

// AdaptiveSpec is spec.adaptive, nil without one.
func (l *ClusterOaatLock) AdaptiveSpec() *AdaptiveCapacity { return l.Spec.Adaptive }

// Adaptive is the adaptive status: status.adaptive.
func (l *ClusterOaatLock) Adaptive() *AdaptiveStatus { return &l.Status.AdaptiveStatus }

// LockHolders are status.holders.
func (l *ClusterOaatLock) LockHolders() []LockHolder { return l.Status.Holders }

// SetLockHolders sets status.holders and status.holderCount.
func (l *ClusterOaatLock) SetLockHolders(holders []LockHolder) {
	l.Status.Holders = holders
	l.Status.HolderCount = int32(len(holders))
}

// LockWaitingGroups is status.waitingGroups.
func (l *ClusterOaatLock) LockWaitingGroups() int32 { return l.Status.WaitingGroups }

// SetLockWaitingGroups sets status.waitingGroups.
func (l *ClusterOaatLock) SetLockWaitingGroups(n int32) { l.Status.WaitingGroups = n }

// LockKey is KindClusterOaatLock/name.
func (l *ClusterOaatLock) LockKey() string { return ClusterLockKey(l.Name) }

// CarriesBreaker reports whether spec.circuitBreaker is Shared.
func (l *OaatLock) CarriesBreaker() bool { return l.Spec.CircuitBreaker == LockBreakerShared }

// LockBreaker is status.circuitBreaker.
func (l *OaatLock) LockBreaker() *LockCircuitBreakerStatus { return l.Status.CircuitBreaker }

// SetLockBreaker sets status.circuitBreaker.
func (l *OaatLock) SetLockBreaker(cb *LockCircuitBreakerStatus) { l.Status.CircuitBreaker = cb }

// CapacityOrDefault is spec.capacity, 1 when unset.
func (l *OaatLock) CapacityOrDefault() int { return max(int(l.Spec.Capacity), 1) }

// CapacityWindows are spec.capacitySchedule.
func (l *OaatLock) CapacityWindows() []CapacityWindow { return l.Spec.CapacitySchedule }

// Capacity is the capacity status.
func (l *OaatLock) Capacity() *CapacityStatus { return &l.Status.CapacityStatus }

// Bounds are what the groups naming the lock may ask in their spec.lockOptions.
func (l *OaatLock) Bounds() LockBounds { return l.Spec.LockBounds }

// Queue is the queue status: status.passedOver.
func (l *OaatLock) Queue() *QueueStatus { return &l.Status.QueueStatus }

// AdaptiveSpec is spec.adaptive, nil without one.
func (l *OaatLock) AdaptiveSpec() *AdaptiveCapacity { return l.Spec.Adaptive }

// Adaptive is the adaptive status: status.adaptive.
func (l *OaatLock) Adaptive() *AdaptiveStatus { return &l.Status.AdaptiveStatus }

// LockHolders are status.holders.
func (l *OaatLock) LockHolders() []LockHolder { return l.Status.Holders }

// SetLockHolders sets status.holders and status.holderCount.
func (l *OaatLock) SetLockHolders(holders []LockHolder) {
	l.Status.Holders = holders
	l.Status.HolderCount = int32(len(holders))
}

// LockWaitingGroups is status.waitingGroups.
func (l *OaatLock) LockWaitingGroups() int32 { return l.Status.WaitingGroups }

// SetLockWaitingGroups sets status.waitingGroups.
func (l *OaatLock) SetLockWaitingGroups(n int32) { l.Status.WaitingGroups = n }

// LockKey is the lock's name.
func (l *OaatLock) LockKey() string { return l.Name }

// DescribeLocks names lock keys for a message, by kind: "OaatLock db, nas and ClusterOaatLock
// shared".
func DescribeLocks(keys []string) string {
	var namespaced, cluster []string
	for _, key := range keys {
		if name, ok := strings.CutPrefix(key, KindClusterOaatLock+"/"); ok {
			cluster = append(cluster, name)
			continue
		}
		namespaced = append(namespaced, key)
	}
	var parts []string
	if len(namespaced) > 0 {
		parts = append(parts, "OaatLock "+strings.Join(namespaced, ", "))
	}
	if len(cluster) > 0 {
		parts = append(parts, KindClusterOaatLock+" "+strings.Join(cluster, ", "))
	}
	return strings.Join(parts, " and ")
}

// HolderNamespace is the namespace of the holder's group: its namespace field, or the lock's own
// namespace for a holder of an OaatLock.
func HolderNamespace(h LockHolder, lock Lock) string {
	if h.Namespace != "" {
		return h.Namespace
	}
	return lock.GetNamespace()
}

// LockOptionFor is the option of the lock of that key in spec.lockOptions: Shared with one slot when
// it has none, its mode and slots defaulted.
func (s *OaatGroupSpec) LockOptionFor(key string) LockOption {
	o := LockOption{Lock: key, Mode: LockShared, Slots: 1}
	for _, opt := range s.LockOptions {
		if opt.Lock == key {
			if opt.Mode != "" {
				o.Mode = opt.Mode
			}
			if opt.Slots > 0 {
				o.Slots = opt.Slots
			}
		}
	}
	return o
}

// Exclusive reports whether the holder holds the lock alone (mode Exclusive).
func (h LockHolder) Exclusive() bool { return h.Mode == LockExclusive }

// SlotsOrOne is the slots the holder holds: its slots field, 1 when absent.
func (h LockHolder) SlotsOrOne() int { return max(int(h.Slots), 1) }

// MaxSlotsOrOne is spec.maxSlotsPerRun, 1 when absent.
func (b LockBounds) MaxSlotsOrOne() int { return max(int(b.MaxSlotsPerRun), 1) }

// MaxPriorityOrZero is spec.maxPriority, 0 when absent.
func (b LockBounds) MaxPriorityOrZero() int32 { return valueOrZero(b.MaxPriority) }

// PriorityOrZero is spec.priority, 0 when absent.
func (s *OaatGroupSpec) PriorityOrZero() int32 { return valueOrZero(s.Priority) }

// valueOrZero is the value p points to, 0 when p is nil.
func valueOrZero(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
