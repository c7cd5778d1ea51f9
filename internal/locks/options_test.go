package locks

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// bounded is the OaatLock nas of the capacity, allowing exclusive holders and up to 3 slots per run,
// held by the holders.
func bounded(capacity int32, hs ...v1alpha1.LockHolder) *v1alpha1.OaatLock {
	l := lock("nas", capacity, hs...)
	l.Spec.ExclusiveHolders, l.Spec.MaxSlotsPerRun = v1alpha1.ExclusiveAllowed, 3
	return l
}

// slotted is the holder taking n slots; sole, the holder taking the lock exclusively.
func slotted(h v1alpha1.LockHolder, n int32) v1alpha1.LockHolder { h.Slots = n; return h }
func sole(h v1alpha1.LockHolder) v1alpha1.LockHolder             { h.Mode = v1alpha1.LockExclusive; return h }

// TestDecideLockOptions proves the review of requests that take several slots or the whole lock
// (spec.lockOptions): in the one global order, each request is granted when the free slots cover
// its own and those of the places before it; an exclusive request only on a lock without holders
// and with no place before it, its place holding every slot (no later request is granted while it
// waits, so the holders drain), and nothing beside an exclusive holder; a request needing more
// slots than the capacity in force, or asking what the lock does not allow, waits without a place;
// while the breaker is open every request takes one slot, the probe.
func TestDecideLockOptions(t *testing.T) {
	a1, b1, c1, e1, s1 := holder("a", "a-1"), holder("b", "b-1"), holder("c", "c-1"), holder("e", "e-1"), holder("s", "s-1")
	running := grp("a").running("a-1")
	runReviews(t, []reviewCase{
		{name: "two slots free, the earlier request takes both: the later waits",
			in:   reviewOf(bounded(3, a1), members(running, grp("b").taking(v1alpha1.LockShared, 2).requesting(-time.Minute, "b-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(a1, slotted(b1, 2)), Granted: holders(slotted(b1, 2)), WaitingGroups: 2}},
		{name: "the earlier request needs three of two free slots: it keeps its place, the later one is not granted past it",
			in:   reviewOf(bounded(3, a1), members(running, grp("b").taking(v1alpha1.LockShared, 3).requesting(-time.Minute, "b-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(a1), WaitingGroups: 2}},
		{name: "a request needing more slots than the capacity in force waits without a place",
			in: reviewOf(lockOf(bounded(3), func(l *v1alpha1.OaatLock) { l.Spec.CapacitySchedule = windows(window("11:00", "13:00", 1)) }),
				members(grp("b").taking(v1alpha1.LockShared, 2).requesting(-time.Minute, "b-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(c1), Granted: holders(c1), WaitingGroups: 2, RetryAt: t0.Add(time.Hour),
				Capacity: Capacity{InForce: 1, NextAt: t0.Add(time.Hour), Next: 3}}},
		{name: "an exclusive request on a held lock: not granted, nor any later one; an earlier shared one is",
			in: reviewOf(bounded(3, a1), members(running, grp("s").requesting(-2*time.Minute, "s-1"),
				grp("e").taking(v1alpha1.LockExclusive, 0).requesting(-time.Minute, "e-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(a1, s1), Granted: holders(s1), WaitingGroups: 3}},
		{name: "an exclusive request on a free lock: granted alone, exclusive",
			in:   reviewOf(bounded(3), members(grp("e").taking(v1alpha1.LockExclusive, 0).requesting(-time.Minute, "e-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(sole(e1)), Granted: holders(sole(e1)), WaitingGroups: 2}},
		{name: "an exclusive holder: nothing granted beside it",
			in:   reviewOf(bounded(3, sole(e1)), members(grp("e").running("e-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(sole(e1)), WaitingGroups: 1}},
		{name: "an exclusive request the lock does not allow: no place, the later one granted",
			in:   reviewOf(lock("nas", 3), members(grp("e").taking(v1alpha1.LockExclusive, 0).requesting(-time.Minute, "e-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(c1), Granted: holders(c1), WaitingGroups: 2}},
		{name: "more slots than the lock allows per run: no place, the later one granted",
			in:   reviewOf(lock("nas", 3), members(grp("b").taking(v1alpha1.LockShared, 2).requesting(-time.Minute, "b-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(c1), Granted: holders(c1), WaitingGroups: 2}},
		{name: "the breaker open: a request of two slots is granted the one slot of the probe",
			in: reviewOf(lockOf(carrying(v1alpha1.BreakerOpen), func(l *v1alpha1.OaatLock) { l.Spec.MaxSlotsPerRun = 2 }),
				members(grp("b").taking(v1alpha1.LockShared, 2).requesting(-time.Minute, "b-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen},
				Holders: holders(slotted(b1, 2)), Granted: holders(slotted(b1, 2)), WaitingGroups: 2}},
		{name: "a live exclusive run the lock lacks, beside another: listed, reported",
			in: reviewOf(bounded(3, a1), members(running, grp("e").taking(v1alpha1.LockExclusive, 0).running("e-1"))),
			want: Review{Holders: holders(a1, sole(e1)), Asserted: holders(sole(e1)),
				Events: []Event{{Group: types.NamespacedName{Namespace: "ns", Name: "e"}, GroupUID: "e-uid", Type: "Warning", Reason: v1alpha1.ReasonLockOverCapacity,
					Message: `OaatLock nas holds 2 runs, one of them exclusive: the run of item "x" (pod e-1) started before the lock listed it; no group naming it starts until enough of its runs have ended`}}}},
		{name: "a live run of two slots the lock lacks, over its capacity: listed, reported with the slots",
			in: reviewOf(bounded(2, a1), members(running, grp("b").taking(v1alpha1.LockShared, 2).running("b-1"))),
			want: Review{Holders: holders(a1, slotted(b1, 2)), Asserted: holders(slotted(b1, 2)),
				Events: []Event{{Group: types.NamespacedName{Namespace: "ns", Name: "b"}, GroupUID: "b-uid", Type: "Warning", Reason: v1alpha1.ReasonLockOverCapacity,
					Message: `OaatLock nas holds 2 runs taking 3 slots, over its capacity of 2: the run of item "x" (pod b-1) started before the lock listed it; no group naming it starts until enough of its runs have ended`}}}},
	})
}

// TestExclusiveBound proves the bound of exclusive holds: a shared waiter is passed over by at most
// one exclusive hold per exclusive waiter that began waiting before it. Three exclusive groups and
// a shared one wait for a free lock, in the order e1, s, e2, e3, each hold lasting one review;
// the lock's grants follow that order exactly, and s runs after one exclusive hold.
func TestExclusiveBound(t *testing.T) {
	order := []mb{
		grp("e1").taking(v1alpha1.LockExclusive, 0).requesting(0, "e1-1"),
		grp("s").requesting(time.Second, "s-1"),
		grp("e2").taking(v1alpha1.LockExclusive, 0).requesting(2*time.Second, "e2-1"),
		grp("e3").taking(v1alpha1.LockExclusive, 0).requesting(3*time.Second, "e3-1"),
	}
	l := bounded(2)
	var granted []string
	for range order {
		r := Decide(reviewOf(l, members(order...)))
		if len(r.Granted) != 1 {
			t.Fatalf("after %v: granted %+v, want one request at a time", granted, r.Granted)
		}
		granted = append(granted, r.Granted[0].Group)
		// The run goes and ends: its group no longer waits, and the lock no longer lists it.
		order = removeMember(order, r.Granted[0].Group)
	}
	if want := []string{"e1", "s", "e2", "e3"}; !slices.Equal(granted, want) {
		t.Errorf("grants in order %v, want %v: the shared waiter passed over only by the exclusive waiter before it", granted, want)
	}
}

// removeMember is the members but the one of the group.
func removeMember(ms []mb, group string) []mb {
	var out []mb
	for _, m := range ms {
		if m.Name != group {
			out = append(out, m)
		}
	}
	return out
}
