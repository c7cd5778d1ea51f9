package locks

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// honouring is the OaatLock nas of capacity 1 honouring priorities up to max, held by the holders.
func honouring(maxPriority int32, hs ...v1alpha1.LockHolder) *v1alpha1.OaatLock {
	l := lock("nas", 1, hs...)
	l.Spec.MaxPriority = ptr.To(maxPriority)
	return l
}

// passed is the lock with the entries of status.passedOver.
func passed[L v1alpha1.Lock](l L, entries ...v1alpha1.PassedOver) L {
	l.Queue().PassedOver = entries
	return l
}

// passedEntry is the entry of the request of group of namespace ns waiting since d after t0,
// passed over count times.
func passedEntry(group string, since time.Duration, count int32) v1alpha1.PassedOver {
	return v1alpha1.PassedOver{Group: group, Since: *at(since), Count: count}
}

// priority sets the priority of the member's request (status.lockWait.priority).
func (b mb) priority(p int32) mb {
	r := *b.Request
	r.Priority = p
	b.Request = &r
	return b
}

// promoted marks the member's request promoted (status.lockWait.promotedAt).
func (b mb) promoted() mb {
	r := *b.Request
	r.PromotedAt = at(-time.Second)
	b.Request = &r
	return b
}

// TestDecidePriority proves the order of a lock's queue with priorities: the higher priority the
// lock honours first (at most its spec.maxPriority; absent, none), then the order of waiting; each
// grant to a request that began to wait later counts against every request still waiting with a
// place (status.passedOver), and at PassLimit the request is promoted: served before every request
// not promoted, as is a request its group marks promoted. Entries of requests granted or
// withdrawn are dropped; while maxPassedOver are listed, the lock honours no priority.
func TestDecidePriority(t *testing.T) {
	b1, c1 := holder("b", "b-1"), holder("c", "c-1")
	early, late := grp("b").requesting(-time.Hour, "b-1"), grp("c").requesting(0, "c-1")
	full := make([]v1alpha1.PassedOver, maxPassedOver)
	for i := range full {
		full[i] = passedEntry(fmt.Sprintf("g%04d", i), time.Duration(-i)*time.Minute, 1)
	}
	runReviews(t, []reviewCase{
		{name: "every request at the default priority: the order of waiting, nothing counted",
			in:   reviewOf(honouring(5), members(early, late)),
			want: Review{Holders: holders(b1), Granted: holders(b1), WaitingGroups: 2}},
		{name: "the later request of higher priority first: the earlier is passed over once",
			in: reviewOf(honouring(5), members(early, late.priority(3))),
			want: Review{Holders: holders(c1), Granted: holders(c1), WaitingGroups: 2,
				PassedOver: []v1alpha1.PassedOver{passedEntry("b", -time.Hour, 1)}}},
		{name: "a lock honouring no priority (no spec.maxPriority): the order of waiting",
			in:   reviewOf(lock("nas", 1), members(early, late.priority(3))),
			want: Review{Holders: holders(b1), Granted: holders(b1), WaitingGroups: 2}},
		{name: "priorities above the lock's spec.maxPriority count as it: equal, the order of waiting",
			in:   reviewOf(honouring(2), members(early.priority(2), late.priority(7))),
			want: Review{Holders: holders(b1), Granted: holders(b1), WaitingGroups: 2}},
		{name: "passed over a second time: counted on",
			in: reviewOf(passed(honouring(5), passedEntry("b", -time.Hour, 1)), members(early, late.priority(3))),
			want: Review{Holders: holders(c1), Granted: holders(c1), WaitingGroups: 2,
				PassedOver: []v1alpha1.PassedOver{passedEntry("b", -time.Hour, 2)}}},
		{name: "passed over PassLimit times: promoted, served before the higher priority; its entry dropped",
			in:   reviewOf(passed(honouring(5), passedEntry("b", -time.Hour, v1alpha1.PassLimit)), members(early, late.priority(3))),
			want: Review{Holders: holders(b1), Granted: holders(b1), WaitingGroups: 2}},
		{name: "a request its group marks promoted (another lock passed it over): served first",
			in:   reviewOf(honouring(5), members(early.promoted(), late.priority(3))),
			want: Review{Holders: holders(b1), Granted: holders(b1), WaitingGroups: 2}},
		{name: "an entry of another request of the group (another since) does not count, and is dropped",
			in: reviewOf(passed(honouring(5), passedEntry("b", -2*time.Hour, v1alpha1.PassLimit)), members(early, late.priority(3))),
			want: Review{Holders: holders(c1), Granted: holders(c1), WaitingGroups: 2,
				PassedOver: []v1alpha1.PassedOver{passedEntry("b", -time.Hour, 1)}}},
		{name: "no grant: the entry of a request still waiting stays as it is",
			in: reviewOf(passed(honouring(5, holder("a", "a-1")), passedEntry("b", -time.Hour, 2)), members(grp("a").running("a-1"), early, late.priority(3))),
			want: Review{Holders: holders(holder("a", "a-1")), WaitingGroups: 2,
				PassedOver: []v1alpha1.PassedOver{passedEntry("b", -time.Hour, 2)}}},
		{name: "a request without a place (more slots than the capacity in force) is not counted, its entry kept",
			in: reviewOf(passed(lockOf(honouring(5), func(l *v1alpha1.OaatLock) {
				l.Spec.MaxSlotsPerRun = 2
				l.Spec.Capacity = 2
				l.Spec.CapacitySchedule = windows(window("11:00", "13:00", 1))
			}),
				passedEntry("b", -time.Hour, 1)), members(early.taking(v1alpha1.LockShared, 2), late.priority(3))),
			want: Review{Holders: holders(c1), Granted: holders(c1), WaitingGroups: 2, RetryAt: t0.Add(time.Hour),
				Capacity:   Capacity{InForce: 1, NextAt: t0.Add(time.Hour), Next: 2},
				PassedOver: []v1alpha1.PassedOver{passedEntry("b", -time.Hour, 1)}}},
		{name: "maxPassedOver requests listed: no priority honoured, the order of waiting; the entries of requests gone dropped",
			in:   reviewOf(passed(honouring(5), full...), members(early, late.priority(3))),
			want: Review{Holders: holders(b1), Granted: holders(b1), WaitingGroups: 2}},
	})
}

// TestDecidePassedOverBound proves that a review that would list more than maxPassedOver requests
// as passed over lists those nearest to being served, as many as the API allows.
func TestDecidePassedOverBound(t *testing.T) {
	var ms []mb
	var entries []v1alpha1.PassedOver
	for i := range maxPassedOver - 1 {
		name, since := fmt.Sprintf("g%04d", i), -time.Duration(i+3)*time.Minute
		ms = append(ms, grp(name).requesting(since, name+"-1"))
		entries = append(entries, passedEntry(name, since, 1))
	}
	ms = append(ms, grp("b").requesting(-2*time.Minute, "b-1"), grp("d").requesting(-time.Minute, "d-1"), grp("c").requesting(0, "c-1").priority(3))
	got := Decide(reviewOf(passed(honouring(5), entries...), members(ms...)))
	if d := diff(holders(holder("c", "c-1")), got.Granted); d != "" {
		t.Fatalf("granted (-want +got):\n%s", d)
	}
	if len(got.PassedOver) != maxPassedOver {
		t.Fatalf("%d requests listed as passed over, want maxPassedOver (%d)", len(got.PassedOver), maxPassedOver)
	}
	for _, p := range got.PassedOver {
		switch {
		case p.Group == "d":
			t.Errorf("d, the last of the queue, is listed: %+v", p)
		case p.Group == "b" && p.Count != 1, p.Group != "b" && p.Count != 2:
			t.Errorf("%s passed over %d times, want 1 for b, 2 for the others", p.Group, p.Count)
		}
	}
}

// TestDecidePriorityOfAClusterLock proves that on a ClusterOaatLock the entries name their
// group's namespace, and that an installation of some namespaces keeps those of the others.
func TestDecidePriorityOfAClusterLock(t *testing.T) {
	cl := passed(clusterLock("db", 1), v1alpha1.PassedOver{Namespace: "other", Group: "z", Since: *at(-time.Hour), Count: 2})
	cl.Spec.MaxPriority = ptr.To[int32](5)
	in := reviewOf(cl, members(grp("b").in("team-a").requesting(-time.Hour, "b-1"), grp("c").in("team-a").requesting(0, "c-1").priority(1)))
	in.Namespaces = []string{"team-a"}
	got := Decide(in)
	want := []v1alpha1.PassedOver{
		{Namespace: "other", Group: "z", Since: *at(-time.Hour), Count: 2},
		{Namespace: "team-a", Group: "b", Since: *at(-time.Hour), Count: 1},
	}
	if d := diff(want, got.PassedOver); d != "" {
		t.Errorf("status.passedOver (-want +got):\n%s", d)
	}
	if d := diff(holders(clusterHolder("team-a", "c", "c-1")), got.Granted); d != "" {
		t.Errorf("granted (-want +got):\n%s", d)
	}
}

// TestRequestPriority proves the group side of priority: the request carries the group's
// spec.priority at most the smallest spec.maxPriority of its locks, and is promoted once one of
// its locks lists it as passed over PassLimit times, for as long as it waits with that since.
func TestRequestPriority(t *testing.T) {
	g := builders.Group().Named("a").Locks("l1", "l2").Obj()
	g.Spec.Priority = ptr.To[int32](9)
	l1, l2 := honouring(4), honouring(6)
	l1.Name, l2.Name = "l1", "l2"
	in := Input{Locks: map[string]v1alpha1.Lock{"l1": l1, "l2": l2}}
	prev := &v1alpha1.LockWait{Since: *at(-time.Hour), Locks: []string{"l1", "l2"}, Item: "x", Pod: "a-1", Priority: 4}
	if got := Request(g, in, nil, "x", "a-1", t0); got.Priority != 4 || got.PromotedAt != nil {
		t.Errorf("a first request: priority %d, promoted %v; want 4, not promoted", got.Priority, got.PromotedAt)
	}
	l2p := passed(l2.DeepCopy(), passedEntry("a", -time.Hour, v1alpha1.PassLimit-1))
	if got := Request(g, Input{Locks: map[string]v1alpha1.Lock{"l1": l1, "l2": l2p}}, prev, "x", "a-1", t0); got.PromotedAt != nil {
		t.Errorf("passed over %d times: promoted; want not yet", v1alpha1.PassLimit-1)
	}
	l2p = passed(l2.DeepCopy(), passedEntry("a", -time.Hour, v1alpha1.PassLimit))
	got := Request(g, Input{Locks: map[string]v1alpha1.Lock{"l1": l1, "l2": l2p}}, prev, "x", "a-1", t0)
	if got.PromotedAt == nil || !got.PromotedAt.Equal(at(0)) {
		t.Errorf("passed over %d times by l2: not promoted", v1alpha1.PassLimit)
	}
	if again := Request(g, in, got, "x", "a-1", t0.Add(time.Minute)); again.PromotedAt == nil || !again.PromotedAt.Equal(got.PromotedAt) {
		t.Error("a promoted request lost its promotion while it waits")
	}
	if fresh := Request(g, Input{Locks: map[string]v1alpha1.Lock{"l1": l1, "l2": l2p}}, nil, "x", "a-2", t0); fresh.PromotedAt != nil {
		t.Error("a new request (another since) took the promotion of the previous one")
	}
	full := passed(l2.DeepCopy(), make([]v1alpha1.PassedOver, maxPassedOver)...)
	if got := Request(g, Input{Locks: map[string]v1alpha1.Lock{"l1": l1, "l2": full}}, nil, "x", "a-1", t0); got.Priority != 0 {
		t.Errorf("a lock listing maxPassedOver requests honours no priority: priority %d, want 0", got.Priority)
	}
	g.Spec.Priority = nil
	if got := Request(g, in, nil, "x", "a-1", t0); got.Priority != 0 {
		t.Errorf("no spec.priority: priority %d, want 0", got.Priority)
	}
}
