package locks

import (
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// BreakerOpen reports whether the lock carries the groups' circuit breaker
// (spec.circuitBreaker: Shared) and it is open.
func BreakerOpen(lock v1alpha1.Lock) bool {
	cb := lock.LockBreaker()
	return lock.CarriesBreaker() && cb != nil && cb.State == v1alpha1.BreakerOpen
}

// Slots is how many runs the lock lets hold it at once: spec.capacity, but one while the breaker
// it carries is open, so that one probe at a time runs for all the groups naming it.
func Slots(lock v1alpha1.Lock) int {
	if BreakerOpen(lock) {
		return 1
	}
	return lock.CapacityOrDefault()
}

// BreakerChanged reports whether the breaker the lock carries changed between two versions of
// it: every group naming the lock follows it.
func BreakerChanged(before, after v1alpha1.Lock) bool {
	return before.CarriesBreaker() != after.CarriesBreaker() ||
		!equality.Semantic.DeepEqual(before.LockBreaker(), after.LockBreaker())
}
