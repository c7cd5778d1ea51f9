package locks

import (
	"slices"
	"testing"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// crossing is two OaatLocks l1 and l2 of capacity 1 and two groups naming both in opposite
// orders: a, which began to wait a minute before t0, and b, which began at t0.
type crossing struct {
	l1, l2 *v1alpha1.OaatLock
	a, b   *v1alpha1.OaatGroup
	// ended are the groups whose current run's pod has ended.
	ended map[string]bool
}

// newCrossing is the crossing with both groups' first requests, decided by Request: a's for pod
// a-1 at t0-1m, b's for pod b-1 at t0.
func newCrossing(t *testing.T) *crossing {
	t.Helper()
	c := &crossing{l1: lock("l1", 1), l2: lock("l2", 1), ended: map[string]bool{},
		a: builders.Group().Named("a").Locks("l1", "l2").Obj(), b: builders.Group().Named("b").Locks("l2", "l1").Obj()}
	c.request(t, c.a, "a-1", t0.Add(-time.Minute), &v1alpha1.LockWait{Since: *at(-time.Minute), Locks: []string{"l1", "l2"}, Item: "x", Pod: "a-1"})
	c.request(t, c.b, "b-1", t0, &v1alpha1.LockWait{Since: *at(0), Locks: []string{"l1", "l2"}, Item: "x", Pod: "b-1"})
	return c
}

// input is what group g's decision knows: both locks, and the other group as a waiter.
func (c *crossing) input(g *v1alpha1.OaatGroup) Input {
	in := Input{Locks: map[string]v1alpha1.Lock{"l1": c.l1, "l2": c.l2}}
	for _, other := range []*v1alpha1.OaatGroup{c.a, c.b} {
		if other != g {
			in.AddWaiter(other)
		}
	}
	return in
}

// request decides g's request for the run of item x in pod at now, checks it against want (nil:
// the run starts) and records it as g's status.lockWait.
func (c *crossing) request(t *testing.T, g *v1alpha1.OaatGroup, pod string, now time.Time, want *v1alpha1.LockWait) {
	t.Helper()
	got := Request(g, c.input(g), g.Status.LockWait, "x", pod, now)
	if d := diff(want, got); d != "" {
		t.Fatalf("Request of group %s (-want +got):\n%s", g.Name, d)
	}
	g.Status.LockWait = got
}

// start records that g started the run of item x in pod at d after t0: its current run, its
// request cleared.
func (c *crossing) start(g *v1alpha1.OaatGroup, pod string, d time.Duration) {
	builders.WrapGroup(g).RunningIn("x", pod, at(d))
	g.Status.LockWait = nil
}

// review reviews l at d after t0 seeing the groups given (a lagging cache sees fewer), checks
// the whole review against want and writes its holders and waiting count to l.
func (c *crossing) review(t *testing.T, l *v1alpha1.OaatLock, d time.Duration, want Review, seen ...*v1alpha1.OaatGroup) {
	t.Helper()
	in := ReviewInput{Lock: l, Now: t0.Add(d), Holders: make([]HolderFacts, len(l.Status.Holders))}
	for _, g := range seen {
		in.Members = append(in.Members, Member{Namespace: g.Namespace, Name: g.Name, UID: string(g.UID),
			Names: slices.Contains(g.Spec.LockKeys(), l.LockKey()), Request: g.Status.LockWait, Run: g.Status.CurrentRun,
			RunEnded: c.ended[g.Name]})
	}
	got := Decide(in)
	if d := diff(withCapacity(want, l), got); d != "" {
		t.Fatalf("review of %s (-want +got):\n%s", l.Name, d)
	}
	l.SetLockHolders(got.Holders)
	l.SetLockWaitingGroups(got.WaitingGroups)
}

// TestTwoLocksBothRequestsSeen proves that when both reviews see both requests, both locks grant
// the earlier group a, which starts, while b waits for both.
func TestTwoLocksBothRequestsSeen(t *testing.T) {
	c := newCrossing(t)
	a1 := holderAt("a", "a-1", time.Second)
	c.review(t, c.l1, time.Second, Review{Holders: holders(a1), Granted: holders(a1), WaitingGroups: 2}, c.a, c.b)
	c.review(t, c.l2, time.Second, Review{Holders: holders(a1), Granted: holders(a1), WaitingGroups: 2}, c.b, c.a)
	c.request(t, c.a, "a-1", t0.Add(2*time.Second), nil)
	c.request(t, c.b, "b-1", t0.Add(2*time.Second), &v1alpha1.LockWait{Since: *at(0), Locks: []string{"l1", "l2"}, Item: "x", Pod: "b-1"})
}

// TestTwoLocksCacheLag proves that the two groups do not deadlock when l1's review sees only b's
// request (its cache lags) and grants it b while l2 grants a: b, holding l1 and missing l2, yields
// l1 since a is earlier and wants it, while a, the earlier, yields nothing; l1's next review drops
// b and grants a, which starts, while b waits for both without a yield; once a's run has ended,
// both locks grant b, which starts.
func TestTwoLocksCacheLag(t *testing.T) {
	c := newCrossing(t)
	a1, b1 := holderAt("a", "a-1", time.Second), holderAt("b", "b-1", time.Second)
	c.review(t, c.l1, time.Second, Review{Holders: holders(b1), Granted: holders(b1), WaitingGroups: 1}, c.b)
	c.review(t, c.l2, time.Second, Review{Holders: holders(a1), Granted: holders(a1), WaitingGroups: 2}, c.a, c.b)

	c.request(t, c.b, "b-1", t0.Add(2*time.Second),
		&v1alpha1.LockWait{Since: *at(0), Locks: []string{"l1", "l2"}, Item: "x", Pod: "b-1", Yielded: []string{"l1"}})
	c.request(t, c.a, "a-1", t0.Add(2*time.Second), &v1alpha1.LockWait{Since: *at(-time.Minute), Locks: []string{"l1"}, Item: "x", Pod: "a-1"})

	a3 := holderAt("a", "a-1", 3*time.Second)
	c.review(t, c.l1, 3*time.Second, Review{Holders: holders(a3), Granted: holders(a3), Dropped: holders(b1), WaitingGroups: 2}, c.a, c.b)
	c.review(t, c.l2, 3*time.Second, Review{Holders: holders(a1), WaitingGroups: 2}, c.a, c.b)

	c.request(t, c.a, "a-1", t0.Add(4*time.Second), nil)
	c.request(t, c.b, "b-1", t0.Add(4*time.Second), &v1alpha1.LockWait{Since: *at(0), Locks: []string{"l1", "l2"}, Item: "x", Pod: "b-1"})

	c.start(c.a, "a-1", 4*time.Second)
	c.review(t, c.l1, 5*time.Second, Review{Holders: holders(a3), WaitingGroups: 1}, c.a, c.b)
	c.review(t, c.l2, 5*time.Second, Review{Holders: holders(a1), WaitingGroups: 1}, c.a, c.b)
	c.request(t, c.b, "b-1", t0.Add(5*time.Second), &v1alpha1.LockWait{Since: *at(0), Locks: []string{"l1", "l2"}, Item: "x", Pod: "b-1"})

	c.ended["a"] = true
	b6 := holderAt("b", "b-1", 6*time.Second)
	c.review(t, c.l1, 6*time.Second, Review{Holders: holders(b6), Granted: holders(b6), Dropped: holders(a3), WaitingGroups: 1}, c.a, c.b)
	c.review(t, c.l2, 6*time.Second, Review{Holders: holders(b6), Granted: holders(b6), Dropped: holders(a1), WaitingGroups: 1}, c.a, c.b)
	c.request(t, c.b, "b-1", t0.Add(7*time.Second), nil)
}
