package locks

import (
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The locks of the tests: an OaatLock of namespace ns, a ClusterOaatLock selecting the
// namespaces labelled team=backup; t0 is the fixed time of the tests.
var (
	t0          = builders.T0
	lock        = builders.Lock
	clusterLock = builders.ClusterLock
)

// holder is the slot of the run of pod of a group of namespace ns, taken at t0.
func holder(group, pod string) v1alpha1.LockHolder {
	return builders.Holder(group, pod, builders.At(0))
}

// group is a group of namespace ns naming the locks, with its current run's pod (none when
// empty), started at t0, and waiting since the given offset from t0 (not waiting when nil).
func group(name string, lockNames []string, pod string, waitingSince *time.Duration) v1alpha1.OaatGroup {
	g := builders.Group().Named(name).Locks(lockNames...)
	if pod != "" {
		g.RunningIn("x", pod, builders.At(0))
	}
	if waitingSince != nil {
		g.WaitingForLocks(builders.At(*waitingSince))
	}
	return *g.Obj()
}

// after is a pointer to an offset from t0.
func after(d time.Duration) *time.Duration { return &d }
