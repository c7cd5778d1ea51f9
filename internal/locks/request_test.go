package locks

import (
	"testing"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// TestRequest proves the group side of the locks: Request is nil (the run starts) only when every
// lock lists the pod with the group's UID and no yield is pending; a holder of another UID or
// another pod does not count; the request keeps the since of the previous one, for a new pod too;
// it yields a granted lock only while another lock is missing and an earlier waiter wants it,
// keeps the yield while the lock lists the pod, and clears it once the lock no longer does.
func TestRequest(t *testing.T) {
	a := builders.Group().Named("a").Locks("l2", "l1").Obj()
	mixed := builders.Group().Named("a").Locks("nas").ClusterLocks("db").Obj()
	mine := holder("a", "a-1")
	otherUID := mine
	otherUID.GroupUID = "a-old-uid"
	l1 := func(hs ...v1alpha1.LockHolder) v1alpha1.Lock { return lock("l1", 1, hs...) }
	l2 := func(hs ...v1alpha1.LockHolder) v1alpha1.Lock { return lock("l2", 1, hs...) }
	in := func(l1, l2 v1alpha1.Lock, waiters ...Waiter) Input {
		return Input{Locks: map[string]v1alpha1.Lock{"l1": l1, "l2": l2}, Waiters: waiters}
	}
	// earlier is a group waiting since before a for l1 (and l3), whose request l1 does not list.
	earlier := Waiter{Place: Place{Since: t0.Add(-time.Hour), Namespace: "ns", Group: "b"}, Pod: "b-1", Locks: []string{"l1", "l3"}}
	later := earlier
	later.Since = t0.Add(time.Hour)
	earlierYielding, earlierOld, earlierOther := earlier, earlier, earlier
	earlierYielding.Yielded = []string{"l1"}
	earlierOld.Pod = ""
	earlierOther.Locks = []string{"l3"}
	request := func(since time.Duration, locks []string, yielded ...string) *v1alpha1.LockWait {
		return &v1alpha1.LockWait{Since: *at(since), Locks: locks, Item: "x", Pod: "a-1", Yielded: yielded}
	}
	both := []string{"l1", "l2"}
	tests := []struct {
		name  string
		group *v1alpha1.OaatGroup
		in    Input
		prev  *v1alpha1.LockWait
		want  *v1alpha1.LockWait
	}{
		{name: "every lock lists the pod with the group's UID: start",
			group: a, in: in(l1(mine), l2(mine)), prev: request(-time.Minute, both), want: nil},
		{name: "no lock lists it: waits for both, its since kept",
			group: a, in: in(l1(), l2()), prev: request(-time.Minute, both), want: request(-time.Minute, both)},
		{name: "a first request: since now",
			group: a, in: in(l1(), l2()), prev: nil, want: request(0, both)},
		{name: "one lock lists it: waits for the other",
			group: a, in: in(l1(mine), l2()), prev: request(-time.Minute, both), want: request(-time.Minute, []string{"l2"})},
		{name: "a holder of the same name and pod, of another UID, does not count",
			group: a, in: in(l1(otherUID), l2(mine)), prev: request(-time.Minute, both), want: request(-time.Minute, []string{"l1"})},
		{name: "a holder of the group's UID for another pod does not count",
			group: a, in: in(l1(holder("a", "a-0")), l2(mine)), prev: request(-time.Minute, both), want: request(-time.Minute, []string{"l1"})},
		{name: "a lock not found is missing",
			group: a, in: Input{Locks: map[string]v1alpha1.Lock{"l2": l2(mine)}}, prev: nil, want: request(0, []string{"l1"})},
		{name: "a new pod keeps the place",
			group: a, in: in(l1(), l2()), prev: &v1alpha1.LockWait{Since: *at(-time.Hour), Locks: both, Item: "y", Pod: "a-0"},
			want: request(-time.Hour, both)},
		{name: "a granted lock, another missing, an earlier waiter wants the granted one: yields it",
			group: a, in: in(l1(mine), l2(), earlier), prev: request(-time.Minute, both), want: request(-time.Minute, both, "l1")},
		{name: "a later waiter wants it: no yield",
			group: a, in: in(l1(mine), l2(), later), prev: request(-time.Minute, both), want: request(-time.Minute, []string{"l2"})},
		{name: "an earlier waiter yielding it itself: no yield",
			group: a, in: in(l1(mine), l2(), earlierYielding), prev: request(-time.Minute, both), want: request(-time.Minute, []string{"l2"})},
		{name: "an earlier waiter of 0.2.0 (no pod): no yield",
			group: a, in: in(l1(mine), l2(), earlierOld), prev: request(-time.Minute, both), want: request(-time.Minute, []string{"l2"})},
		{name: "an earlier waiter not naming it: no yield",
			group: a, in: in(l1(mine), l2(), earlierOther), prev: request(-time.Minute, both), want: request(-time.Minute, []string{"l2"})},
		{name: "an earlier waiter the lock lists too: no yield",
			group: a, in: in(lock("l1", 2, mine, holder("b", "b-1")), l2(), earlier), prev: request(-time.Minute, both),
			want: request(-time.Minute, []string{"l2"})},
		{name: "an earlier waiter wants it, but no lock is missing: no yield, start",
			group: a, in: in(l1(mine), l2(mine), earlier), prev: request(-time.Minute, both), want: nil},
		{name: "a yield kept while the lock lists the pod, the waiter gone",
			group: a, in: in(l1(mine), l2()), prev: request(-time.Minute, both, "l1"), want: request(-time.Minute, both, "l1")},
		{name: "a yield kept while the lock lists the pod, though every lock lists it: never start while yielding",
			group: a, in: in(l1(mine), l2(mine)), prev: request(-time.Minute, both, "l1"), want: request(-time.Minute, []string{"l1"}, "l1")},
		{name: "the yield cleared once the lock no longer lists the pod",
			group: a, in: in(l1(holder("b", "b-1")), l2()), prev: request(-time.Minute, both, "l1"), want: request(-time.Minute, both)},
		{name: "the yield cleared once the lock no longer lists the pod, the other lock listing it",
			group: a, in: in(l1(), l2(mine)), prev: request(-time.Minute, both, "l1"), want: request(-time.Minute, []string{"l1"})},
		{name: "the yield of another pod is not kept",
			group: a, in: in(l1(mine), l2()), prev: &v1alpha1.LockWait{Since: *at(-time.Minute), Locks: both, Item: "x", Pod: "a-0", Yielded: []string{"l1"}},
			want: request(-time.Minute, []string{"l2"})},
		{name: "an OaatLock and a ClusterOaatLock: keys in order, the ClusterOaatLock's holder with its namespace",
			group: mixed,
			in: Input{Locks: map[string]v1alpha1.Lock{"nas": lock("nas", 1),
				"ClusterOaatLock/db": clusterLock("db", 1, clusterHolder("ns", "a", "a-1"))}},
			prev: nil, want: request(0, []string{"nas"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Request(tt.group, tt.in, tt.prev, "x", "a-1", t0)
			if d := diff(tt.want, got); d != "" {
				t.Fatalf("Request (-want +got):\n%s", d)
			}
		})
	}
}
