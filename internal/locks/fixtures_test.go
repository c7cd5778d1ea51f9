package locks

import (
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// at is the API time d after t0.
func at(d time.Duration) *metav1.Time { return builders.At(d) }

// holder is the slot of the run of item x in pod of a group of namespace ns (UID the group's name
// followed by "-uid"), taken at t0.
func holder(group, pod string) v1alpha1.LockHolder {
	return builders.Holder(group, pod, at(0))
}

// holderAt is holder, taken d after t0.
func holderAt(group, pod string, d time.Duration) v1alpha1.LockHolder {
	return builders.Holder(group, pod, at(d))
}

// clusterHolder is holder as a ClusterOaatLock stores it: with the group's namespace.
func clusterHolder(namespace, group, pod string) v1alpha1.LockHolder {
	h := holder(group, pod)
	h.Namespace = namespace
	return h
}

// group is a group of namespace ns naming the locks, with its current run's pod (none when
// empty), started at t0, and waiting since the given offset from t0 (not waiting when nil).
func group(name string, lockNames []string, pod string, waitingSince *time.Duration) v1alpha1.OaatGroup {
	g := builders.Group().Named(name).Locks(lockNames...)
	if pod != "" {
		g.RunningIn("x", pod, at(0))
	}
	if waitingSince != nil {
		g.WaitingForLocks(at(*waitingSince))
	}
	return *g.Obj()
}

// after is a pointer to an offset from t0.
func after(d time.Duration) *time.Duration { return &d }

// wait is a group's request (status.lockWait) for the run of item x in pod, waiting since d after
// t0, yielding the locks given.
func wait(d time.Duration, pod string, yielded ...string) *v1alpha1.LockWait {
	return &v1alpha1.LockWait{Since: *at(d), Item: "x", Pod: pod, Yielded: yielded}
}

// mb builds a Member: a group as the review of a lock sees it.
type mb Member

// grp is the member of group name of namespace ns (UID the name followed by "-uid") naming the
// lock, neither running nor waiting.
func grp(name string) mb {
	return mb{Namespace: "ns", Name: name, UID: name + "-uid", Names: true}
}

// m is the member built.
func (b mb) m() Member { return Member(b) }

// in sets the member's namespace.
func (b mb) in(namespace string) mb {
	b.Namespace = namespace
	return b
}

// uid sets the member's UID.
func (b mb) uid(uid string) mb {
	b.UID = uid
	return b
}

// running makes status.currentRun the run of item x in pod, started at t0.
func (b mb) running(pod string) mb {
	b.Run = &v1alpha1.CurrentRun{Item: "x", PodName: pod, StartedAt: *at(0)}
	return b
}

// ended says that the current run's pod has ended.
func (b mb) ended() mb {
	b.RunEnded = true
	return b
}

// requesting makes status.lockWait the request wait(since, pod, yielded...).
func (b mb) requesting(since time.Duration, pod string, yielded ...string) mb {
	b.Request = wait(since, pod, yielded...)
	return b
}

// deleting says that the group is being deleted.
func (b mb) deleting() mb {
	b.Deleting = true
	return b
}

// notNaming says that the group no longer names the lock (it is a member as a holder's group).
func (b mb) notNaming() mb {
	b.Names = false
	return b
}

// withBreaker sets the group's status.circuitBreaker.
func (b mb) withBreaker(cb *v1alpha1.CircuitBreakerStatus) mb {
	b.Breaker = cb
	return b
}

// members are the members built.
func members(bs ...mb) []Member {
	ms := make([]Member, 0, len(bs))
	for _, b := range bs {
		ms = append(ms, b.m())
	}
	return ms
}

// reviewOf is the input of the review of lock at t0 by an installation of all namespaces, each of
// its holders with the facts given (a holder beyond them of a live group: zero facts).
func reviewOf(l v1alpha1.Lock, ms []Member, facts ...HolderFacts) ReviewInput {
	in := ReviewInput{Lock: l, Members: ms, Now: t0}
	for i := range l.LockHolders() {
		var f HolderFacts
		if i < len(facts) {
			f = facts[i]
		}
		in.Holders = append(in.Holders, f)
	}
	return in
}

// withCapacity is the review wanted of lock: when want says nothing of the capacity, that of a lock
// without spec.capacitySchedule, its spec.capacity in force and no change.
func withCapacity(want Review, lock v1alpha1.Lock) Review {
	if want.Capacity == (Capacity{}) {
		want.Capacity = Capacity{InForce: lock.CapacityOrDefault()}
	}
	return want
}

// holders is a list of holders, for the wanted values of a review.
func holders(hs ...v1alpha1.LockHolder) []v1alpha1.LockHolder { return hs }

// equateTimes compares the API times of the values by their instant.
var equateTimes = builders.EquateTimes

// diff is the difference between two values as cmp.Diff shows it, times compared by instant.
func diff(want, got any) string { return cmp.Diff(want, got, equateTimes) }

// lockOf is a lock for the table of a test: an OaatLock or a ClusterOaatLock, changed by edit.
func lockOf[L v1alpha1.Lock](l L, edit func(L)) L {
	edit(l)
	return l
}

// taking sets how the member's runs take the lock (spec.lockOptions).
func (b mb) taking(mode v1alpha1.LockMode, slots int32) mb {
	b.Option = v1alpha1.LockOption{Mode: mode, Slots: slots}
	return b
}
