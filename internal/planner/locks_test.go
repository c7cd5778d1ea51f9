package planner

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The group only asks for its locks: its request is its own status.lockWait (item, pod, since,
// the locks that do not list it yet, those it yields), and its run starts only once every lock it
// names lists the request's pod with the group's UID. The locks' reconcilers grant and drop; the
// tests that play a lock's review here call locks.Decide, as the reconciler does.

// otherHolder is a slot held by the run of another group.
func otherHolder(group string) v1alpha1.LockHolder {
	return builders.Holder(group, group+"-x-1", at(-time.Minute))
}

// grant is a lock's holder for the request of the test's group (backups, UID backups-uid) for the
// run of item a in pod: the lock granted the request.
func grant(pod string) v1alpha1.LockHolder {
	return v1alpha1.LockHolder{Group: "backups", GroupUID: "backups-uid", Item: "a", Pod: pod, Since: *at(-time.Second)}
}

// waiter is another group of namespace ns that waits, since the time given, for the run of pod,
// naming the locks.
func waiter(group string, since time.Duration, pod string, keys ...string) locks.Waiter {
	return locks.Waiter{Place: locks.Place{Since: t0.Add(since), Namespace: "ns", Group: group}, Pod: pod, Locks: keys}
}

// request is status.lockWait of a request since the time given for the run of item in pod,
// waiting for the locks waitFor (those it yields among them).
func request(since time.Duration, item, pod string, waitFor []string, yielded ...string) *v1alpha1.LockWait {
	return &v1alpha1.LockWait{Since: *at(since), Locks: waitFor, Item: item, Pod: pod, Yielded: yielded}
}

// lockedInput is the input of a group naming the given locks, which exist as given.
func lockedInput(g *v1alpha1.OaatGroup, now time.Duration, namespaced []*v1alpha1.OaatLock, waiters []locks.Waiter, pods ...corev1.Pod) Input {
	all := make([]v1alpha1.Lock, 0, len(namespaced))
	for _, l := range namespaced {
		all = append(all, l)
	}
	return mixedInput(g, now, all, nil, waiters, pods...)
}

// mixedInput is the input of a group naming the given locks of either kind, in a namespace of
// the given labels.
func mixedInput(g *v1alpha1.OaatGroup, now time.Duration, all []v1alpha1.Lock, nsLabels map[string]string, waiters []locks.Waiter, pods ...corev1.Pod) Input {
	in := input(g, now, pods...)
	in.Locks = locks.Input{Locks: map[string]v1alpha1.Lock{}, NamespaceLabels: nsLabels, NamespaceRead: true, Waiters: waiters}
	for _, l := range all {
		in.Locks.Locks[l.LockKey()] = l
	}
	return in
}

// waitedView is the plan's LocksWaited as the keys of its locks and the time waited; nil for none.
type waitedView struct {
	Locks  []string
	Waited time.Duration
}

func waitedOf(p Plan) *waitedView {
	if p.LocksWaited == nil {
		return nil
	}
	v := &waitedView{Waited: p.LocksWaited.Waited}
	for _, l := range p.LocksWaited.Locks {
		v.Locks = append(v.Locks, l.LockKey())
	}
	return v
}

// checkWaiting fails the test unless the plan starts nothing and waits for locks with the request
// want: no run recorded, the item waiting with LockHeld, a look again after lockRecheck.
func checkWaiting(t *testing.T, p Plan, want *v1alpha1.LockWait) {
	t.Helper()
	if p.Create != nil || p.Status.CurrentRun != nil || p.LocksWaited != nil {
		t.Fatalf("a waiting group starts: create %v, currentRun %+v, locksWaited %+v", p.Create, p.Status.CurrentRun, waitedOf(p))
	}
	if diff := cmp.Diff(want, p.Status.LockWait); diff != "" {
		t.Fatalf("lockWait (-want +got):\n%s", diff)
	}
	if it := planItem(t, p, want.Item); it.WaitReason != v1alpha1.WaitLockHeld {
		t.Fatalf("item %s waits for %q, want %s", want.Item, it.WaitReason, v1alpha1.WaitLockHeld)
	}
	if p.RequeueAfter != lockRecheck {
		t.Fatalf("requeueAfter %v, want %v", p.RequeueAfter, lockRecheck)
	}
}

// checkStarted fails the test unless the plan starts the run of item in pod, with no request
// left, having waited as want says.
func checkStarted(t *testing.T, p Plan, item, pod string, want *waitedView) {
	t.Helper()
	if p.Create == nil || p.Create.Name != pod || p.Status.CurrentRun == nil || p.Status.CurrentRun.Item != item || p.Status.CurrentRun.PodName != pod {
		t.Fatalf("create %v, currentRun %+v; want the run of %s in %s (lockWait %+v)", p.Create, p.Status.CurrentRun, item, pod, p.Status.LockWait)
	}
	if p.Status.LockWait != nil {
		t.Fatalf("lockWait %+v once the run starts, want none", p.Status.LockWait)
	}
	if diff := cmp.Diff(want, waitedOf(p)); diff != "" {
		t.Fatalf("locksWaited (-want +got):\n%s", diff)
	}
}

func TestRequestLocks(t *testing.T) {
	pod := podName(newGroup("a"), "a", 1)
	older := waiter("older", -time.Hour, "older-pod", "nas")
	tests := []struct {
		name    string
		spec    []string
		locks   []*v1alpha1.OaatLock
		waiters []locks.Waiter
		prev    *v1alpha1.LockWait
		// wantWait is the request; nil when the run starts, having waited wantWaited.
		wantWait   *v1alpha1.LockWait
		wantWaited *waitedView
	}{
		{name: "no locks: the run starts, nothing asked"},
		{name: "a free lock that does not list the request: the group asks it and waits", spec: []string{"nas"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1)},
			wantWait: request(0, "a", pod, []string{"nas"})},
		{name: "a full lock: the same request, the lock decides", spec: []string{"nas"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1, otherHolder("other"))},
			wantWait: request(0, "a", pod, []string{"nas"})},
		{name: "the lock lists the request's pod: the run starts, having waited since the request", spec: []string{"nas"},
			locks: []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod))}, prev: request(-5*time.Minute, "a", pod, []string{"nas"}),
			wantWaited: &waitedView{Locks: []string{"nas"}, Waited: 5 * time.Minute}},
		{name: "the lock lists the pod with no request before: the run starts, having waited nothing", spec: []string{"nas"},
			locks:      []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod))},
			wantWaited: &waitedView{Locks: []string{"nas"}}},
		{name: "the lock lists an ended run of the group: the next run asks again", spec: []string{"nas"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant("backups-a-0"))},
			wantWait: request(0, "a", pod, []string{"nas"})},
		{name: "the lock lists the pod for an earlier group of the same name (another UID): not this group's grant", spec: []string{"nas"},
			locks: []*v1alpha1.OaatLock{builders.Lock("nas", 1, func() v1alpha1.LockHolder {
				h := grant(pod)
				h.GroupUID = "old-uid"
				return h
			}())},
			wantWait: request(0, "a", pod, []string{"nas"})},
		{name: "one of two locks lists the request: the group waits for the other only", spec: []string{"nas", "db"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod)), builders.Lock("db", 1)},
			prev:     request(-time.Minute, "a", pod, []string{"db", "nas"}),
			wantWait: request(-time.Minute, "a", pod, []string{"db"})},
		{name: "both locks list the request: the run starts", spec: []string{"nas", "db"},
			locks:      []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod)), builders.Lock("db", 1, grant(pod))},
			prev:       request(-time.Minute, "a", pod, []string{"db"}),
			wantWaited: &waitedView{Locks: []string{"db", "nas"}, Waited: time.Minute}},
		{name: "holding nas while it waits for db, the group yields nas to an earlier waiter of nas", spec: []string{"nas", "db"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod)), builders.Lock("db", 1)},
			waiters:  []locks.Waiter{older},
			prev:     request(-time.Minute, "a", pod, []string{"db"}),
			wantWait: request(-time.Minute, "a", pod, []string{"db", "nas"}, "nas")},
		{name: "a younger waiter of nas: nothing yielded", spec: []string{"nas", "db"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod)), builders.Lock("db", 1)},
			waiters:  []locks.Waiter{waiter("younger", time.Hour, "younger-pod", "nas")},
			prev:     request(-time.Minute, "a", pod, []string{"db"}),
			wantWait: request(-time.Minute, "a", pod, []string{"db"})},
		{name: "an earlier waiter that nas lists already: nothing yielded", spec: []string{"nas", "db"},
			locks: []*v1alpha1.OaatLock{builders.Lock("nas", 2, grant(pod), builders.Holder("older", "older-pod", at(-time.Second))),
				builders.Lock("db", 1)},
			waiters:  []locks.Waiter{older},
			prev:     request(-time.Minute, "a", pod, []string{"db"}),
			wantWait: request(-time.Minute, "a", pod, []string{"db"})},
		{name: "an earlier waiter that yields nas itself: nothing yielded", spec: []string{"nas", "db"},
			locks: []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod)), builders.Lock("db", 1)},
			waiters: []locks.Waiter{func() locks.Waiter {
				w := older
				w.Yielded = []string{"nas"}
				return w
			}()},
			prev:     request(-time.Minute, "a", pod, []string{"db"}),
			wantWait: request(-time.Minute, "a", pod, []string{"db"})},
		{name: "an earlier waiter of db only: nas not yielded", spec: []string{"nas", "db"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod)), builders.Lock("db", 1)},
			waiters:  []locks.Waiter{waiter("older", -time.Hour, "older-pod", "db")},
			prev:     request(-time.Minute, "a", pod, []string{"db"}),
			wantWait: request(-time.Minute, "a", pod, []string{"db"})},
		{name: "a yield is kept while the lock still lists the grant, with no earlier waiter left", spec: []string{"nas", "db"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod)), builders.Lock("db", 1)},
			prev:     request(-time.Minute, "a", pod, []string{"db", "nas"}, "nas"),
			wantWait: request(-time.Minute, "a", pod, []string{"db", "nas"}, "nas")},
		{name: "every lock lists the pod but one is yielded: the run does not start", spec: []string{"nas", "db"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod)), builders.Lock("db", 1, grant(pod))},
			prev:     request(-time.Minute, "a", pod, []string{"db", "nas"}, "nas"),
			wantWait: request(-time.Minute, "a", pod, []string{"nas"}, "nas")},
		{name: "the yielded lock dropped the grant: the group asks for it again", spec: []string{"nas", "db"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1, otherHolder("older")), builders.Lock("db", 1, grant(pod))},
			prev:     request(-time.Minute, "a", pod, []string{"db", "nas"}, "nas"),
			wantWait: request(-time.Minute, "a", pod, []string{"nas"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGroup("a")
			g.Spec.Locks = tt.spec
			g.Status.LockWait = tt.prev
			p := Decide(lockedInput(g, 0, tt.locks, tt.waiters))
			if tt.wantWait != nil {
				checkWaiting(t, p, tt.wantWait)
				return
			}
			checkStarted(t, p, "a", pod, tt.wantWaited)
		})
	}
}

// A request keeps its place (since) while it waits, and the time waited is observed when the run
// starts.
func TestLockWaitKeepsItsPlaceAndIsObservedOnStart(t *testing.T) {
	g := newGroup("a")
	g.Spec.Locks = []string{"nas"}
	pod := podName(g, "a", 1)
	full := []*v1alpha1.OaatLock{builders.Lock("nas", 1, otherHolder("other"))}

	p := Decide(lockedInput(g, 0, full, nil))
	checkWaiting(t, p, request(0, "a", pod, []string{"nas"}))
	g = applied(g, p)
	p = Decide(lockedInput(g, 10*time.Minute, full, nil))
	checkWaiting(t, p, request(0, "a", pod, []string{"nas"}))
	g = applied(g, p)
	p = Decide(lockedInput(g, 15*time.Minute, []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod))}, nil))
	checkStarted(t, p, "a", pod, &waitedView{Locks: []string{"nas"}, Waited: 15 * time.Minute})
}

// pickRand always picks the tie of its index (modulo their number).
type pickRand int

func (r pickRand) IntN(n int) int { return int(r) % n }

// Among tied items, a waiting request keeps its item at every pass, whatever the random tie-break
// says: the lock's grant is for its pod.
func TestRequestKeepsItsItemAmongTies(t *testing.T) {
	g := newGroup("a", "b", "c")
	g.Spec.Locks = []string{"nas"}
	full := []*v1alpha1.OaatLock{builders.Lock("nas", 1, otherHolder("other"))}
	in := lockedInput(g, 0, full, nil)
	in.Rand = pickRand(1)
	p := Decide(in)
	checkWaiting(t, p, request(0, "b", podName(g, "b", 1), []string{"nas"}))
	g = applied(g, p)
	for i := range 3 {
		in := lockedInput(g, time.Duration(i+1)*time.Minute, full, nil)
		in.Rand = pickRand(i)
		p := Decide(in)
		checkWaiting(t, p, request(0, "b", podName(g, "b", 1), []string{"nas"}))
	}
}

func TestMissingLockMakesTheGroupNotReady(t *testing.T) {
	g := newGroup("a")
	g.Spec.Locks = []string{"nas", "db"}
	p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("db", 1)}, nil))
	if p.Create != nil || p.Status.LockWait != nil {
		t.Fatalf("a group naming a missing lock starts or asks: create %v, lockWait %+v", p.Create, p.Status.LockWait)
	}
	c := condition(t, p, v1alpha1.ConditionReady)
	if c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonLockNotFound) ||
		c.Message != `OaatLock "nas" named by spec.locks not found in namespace ns` {
		t.Fatalf("Ready = %+v", c)
	}
}

// The group withdraws its request when no run waits for its locks (the lock then drops its grant),
// and a new run asks anew: a grant of an ended run does not start it.
func TestEndLockWait(t *testing.T) {
	pod1, pod2 := podName(newGroup("a"), "a", 1), podName(newGroup("a"), "b", 2)
	t.Run("a group suspended while it waits withdraws its request", func(t *testing.T) {
		g := newGroup("a")
		g.Spec.Locks = []string{"nas"}
		g.Spec.Suspend = true
		g.Status.LockWait = request(-time.Minute, "a", pod1, []string{"nas"})
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod1))}, nil))
		if p.Create != nil || p.Status.LockWait != nil || p.LocksWaited != nil {
			t.Fatalf("create %v, lockWait %+v, locksWaited %+v; want no run and no request", p.Create, p.Status.LockWait, waitedOf(p))
		}
		if it := planItem(t, p, "a"); it.WaitReason == v1alpha1.WaitLockHeld {
			t.Fatalf("item a waits for %s though the group asks for no lock", it.WaitReason)
		}
	})
	t.Run("a running group has no request", func(t *testing.T) {
		g := newGroup("a")
		g.Spec.Locks = []string{"nas"}
		running(t, g, "a", 1, at(-time.Minute))
		g.Status.LockWait = request(-2*time.Minute, "a", pod1, []string{"nas"})
		pod := runPod(t, g, "a", 1, corev1.PodRunning)
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod1))}, nil, pod))
		if p.Create != nil || p.Status.LockWait != nil || p.Status.CurrentRun == nil || p.Status.CurrentRun.PodName != pod1 {
			t.Fatalf("create %v, lockWait %+v, currentRun %+v; want the run going on and no request", p.Create, p.Status.LockWait, p.Status.CurrentRun)
		}
	})
	t.Run("the next run after an ended one asks anew; the grant of the ended run does not start it", func(t *testing.T) {
		g := newGroup("a", "b")
		g.Spec.Locks = []string{"nas"}
		running(t, g, "a", 1, at(-time.Minute))
		pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(-10*time.Second))
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod1))}, nil, pod))
		if p.Status.CurrentRun != nil {
			t.Fatalf("the ended run was not recorded: %+v", p.Status.CurrentRun)
		}
		checkWaiting(t, p, request(0, "b", pod2, []string{"nas"}))
	})
	t.Run("a live pod of the group that is not its run keeps it from asking", func(t *testing.T) {
		g := newGroup("a")
		g.Spec.Locks = []string{"nas"}
		g.Status.LockWait = request(-time.Minute, "a", pod1, []string{"nas"})
		rogue := runPod(t, g, "a", 1, corev1.PodRunning)
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(pod1))}, nil, rogue))
		if p.Create != nil || p.Status.LockWait != nil {
			t.Fatalf("create %v, lockWait %+v while pod %s lives; want neither", p.Create, p.Status.LockWait, rogue.Name)
		}
	})
}

// review plays the review of the lock by its reconciler (locks.Decide) with the groups naming it,
// at now, and returns the lock with its new holders. A holder of a group not given is kept.
func review(t *testing.T, lock *v1alpha1.OaatLock, now time.Duration, groups ...*v1alpha1.OaatGroup) *v1alpha1.OaatLock {
	t.Helper()
	in := locks.ReviewInput{Lock: lock, Now: t0.Add(now)}
	for _, g := range groups {
		in.Members = append(in.Members, locks.Member{Namespace: g.Namespace, Name: g.Name, UID: string(g.UID),
			Names: slices.Contains(g.Spec.Locks, lock.Name), Request: g.Status.LockWait, Run: g.Status.CurrentRun})
	}
	for _, h := range lock.Status.Holders {
		known := slices.ContainsFunc(groups, func(g *v1alpha1.OaatGroup) bool { return g.Name == h.Group })
		in.Holders = append(in.Holders, locks.HolderFacts{Foreign: !known})
	}
	r := locks.Decide(in)
	reviewed := lock.DeepCopy()
	reviewed.Status.Holders = r.Holders
	return reviewed
}

// waitersFor are the groups other than g that wait for locks, as a group's reconciler gathers them.
func waitersFor(g *v1alpha1.OaatGroup, groups ...*v1alpha1.OaatGroup) []locks.Waiter {
	in := locks.Input{}
	for _, o := range groups {
		if o.Name != g.Name {
			in.AddWaiter(o)
		}
	}
	return in.Waiters
}

// pass is one pass of group g over the locks, the other groups waiting as their statuses say; it
// returns the group with the plan's status applied and the plan.
func pass(t *testing.T, g *v1alpha1.OaatGroup, now time.Duration, all []*v1alpha1.OaatLock, groups ...*v1alpha1.OaatGroup) (*v1alpha1.OaatGroup, Plan) {
	t.Helper()
	p := Decide(lockedInput(g, now, all, waitersFor(g, groups...)))
	return applied(g, p), p
}

// TestTwoLockGroupIsNotStarved: a group needing two locks has a place in the queue of each as soon
// as it asks; a group needing one of them that asks later waits behind it, so the lock that frees
// first is granted to the two-lock group, which starts once the other frees too.
func TestTwoLockGroupIsNotStarved(t *testing.T) {
	both := builders.Group("a").Named("both").Locks("db", "nas").Obj()
	one := builders.Group("a").Named("one").Locks("nas").Obj()
	nas, db := builders.Lock("nas", 1), builders.Lock("db", 1, otherHolder("db-only"))

	both, _ = pass(t, both, -time.Minute, []*v1alpha1.OaatLock{nas, db}, one)
	one, _ = pass(t, one, 0, []*v1alpha1.OaatLock{nas, db}, both)
	nas = review(t, nas, 0, both, one)
	if got := holderPodsOf(nas); !slices.Equal(got, []string{podName(both, "a", 1)}) {
		t.Fatalf("nas lists %v, want the two-lock group's request, which came first", got)
	}
	one, p := pass(t, one, time.Second, []*v1alpha1.OaatLock{nas, db}, both)
	checkWaiting(t, p, request(0, "a", podName(one, "a", 1), []string{"nas"}))
	both, p = pass(t, both, time.Second, []*v1alpha1.OaatLock{nas, db}, one)
	checkWaiting(t, p, request(-time.Minute, "a", podName(both, "a", 1), []string{"db"}))

	// db frees: the two-lock group gets it and starts, holding both.
	db = review(t, builders.Lock("db", 1), 2*time.Second, both)
	_, p = pass(t, both, 3*time.Second, []*v1alpha1.OaatLock{nas, db}, one)
	checkStarted(t, p, "a", podName(both, "a", 1), &waitedView{Locks: []string{"db", "nas"}, Waited: time.Minute + 3*time.Second})
}

// TestYieldBreaksTheDeadlock: two groups naming the same two locks, each granted one of them (each
// lock's reconciler saw one request at first), would each wait for the other. The later one
// yields its grant to the earlier, which starts; the later then asks again and keeps its place.
func TestYieldBreaksTheDeadlock(t *testing.T) {
	first := builders.Group("a").Named("first").Locks("db", "nas").Obj()
	second := builders.Group("a").Named("second").Locks("db", "nas").Obj()
	nas, db := builders.Lock("nas", 1), builders.Lock("db", 1)
	first, _ = pass(t, first, -time.Minute, []*v1alpha1.OaatLock{nas, db})
	second, _ = pass(t, second, 0, []*v1alpha1.OaatLock{nas, db})
	db = review(t, db, 0, first)    // db's reconciler saw first's request only
	nas = review(t, nas, 0, second) // nas's saw second's only
	firstPod, secondPod := podName(first, "a", 1), podName(second, "a", 1)
	if !slices.Equal(holderPodsOf(db), []string{firstPod}) || !slices.Equal(holderPodsOf(nas), []string{secondPod}) {
		t.Fatalf("db lists %v, nas %v; want each granted to one group", holderPodsOf(db), holderPodsOf(nas))
	}

	second, p := pass(t, second, time.Second, []*v1alpha1.OaatLock{nas, db}, first)
	checkWaiting(t, p, request(0, "a", secondPod, []string{"db", "nas"}, "nas"))
	first, p = pass(t, first, time.Second, []*v1alpha1.OaatLock{nas, db}, second)
	checkWaiting(t, p, request(-time.Minute, "a", firstPod, []string{"nas"}))

	nas = review(t, nas, 2*time.Second, first, second)
	if !slices.Equal(holderPodsOf(nas), []string{firstPod}) {
		t.Fatalf("nas lists %v once second yields it, want first's request", holderPodsOf(nas))
	}
	_, p = pass(t, first, 3*time.Second, []*v1alpha1.OaatLock{nas, db}, second)
	checkStarted(t, p, "a", firstPod, &waitedView{Locks: []string{"db", "nas"}, Waited: time.Minute + 3*time.Second})
	_, p = pass(t, second, 3*time.Second, []*v1alpha1.OaatLock{nas, db}, first)
	checkWaiting(t, p, request(0, "a", secondPod, []string{"db", "nas"}))
}

// holderPodsOf are the pods a lock lists.
func holderPodsOf(lock v1alpha1.Lock) []string {
	var pods []string
	for _, h := range lock.LockHolders() {
		pods = append(pods, h.Pod)
	}
	return pods
}

// On-demand runs ask for the group's locks like scheduled ones: the OaatRun waits, saying so,
// while the lock does not list the request, and its run starts once the lock lists the request's
// pod. An OaatRun arriving while the group waits changes the request's item and pod, keeping its
// place.
func TestOnDemandRunRequestsTheLocks(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.Locks = []string{"nas"}
	g.Status.LockWait = request(-10*time.Minute, "a", podName(g, "a", 1), []string{"nas"})
	onDemandRun := newOnDemandRun("now", "backups", "b", 0)
	podB := podName(g, "b", 1)

	p := Decide(withOnDemandRuns(lockedInput(g, time.Minute, []*v1alpha1.OaatLock{builders.Lock("nas", 1, otherHolder("other"))}, nil), onDemandRun))
	checkWaiting(t, p, request(-10*time.Minute, "b", podB, []string{"nas"}))
	if got := updates(p.OpenOnDemandRuns); !slices.Equal(got, []string{"now Pending " + string(v1alpha1.WaitLockHeld)}) {
		t.Fatalf("open requests %v, want the request pending with reason LockHeld", got)
	}
	if msg := p.OpenOnDemandRuns[0].Status.Message; msg != "waits for a slot of OaatLock nas" {
		t.Fatalf("message %q", msg)
	}

	g = applied(g, p)
	h := grant(podB)
	h.Item = "b"
	p = Decide(withOnDemandRuns(lockedInput(g, 2*time.Minute, []*v1alpha1.OaatLock{builders.Lock("nas", 1, h)}, nil), onDemandRun))
	checkStarted(t, p, "b", podB, &waitedView{Locks: []string{"nas"}, Waited: 12 * time.Minute})
	if p.Status.CurrentRun.OaatRun != "now" {
		t.Fatalf("currentRun %+v, want the OaatRun's run", p.Status.CurrentRun)
	}
}

// TestSlotsBeyondTheCapacityInForceSaySo: a group whose runs take 3 slots of a lock that has 1 in
// force (a window of spec.capacitySchedule) waits for it, Ready, and its Running condition says
// why and until when.
func TestSlotsBeyondTheCapacityInForceSaySo(t *testing.T) {
	g := newGroup("a")
	g.Spec.Locks = []string{"nas"}
	g.Spec.LockOptions = []v1alpha1.LockOption{{Lock: "nas", Slots: 3}}
	nas := builders.Lock("nas", 4)
	nas.Spec.MaxSlotsPerRun = 3
	nas.Spec.CapacitySchedule = []v1alpha1.CapacityWindow{{Start: "11:00", End: "13:00", Capacity: ptr.To[int32](1)}}
	p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{nas}, nil))
	if p.Create != nil || p.Status.LockWait == nil {
		t.Fatalf("create %v, lockWait %+v: want the group waiting for nas", p.Create, p.Status.LockWait)
	}
	if c := condition(t, p, v1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", c)
	}
	want := `No item pod is active: item "a" needs 3 slots of OaatLock nas, which has 1 in force until 2026-11-21T13:00:00Z (4 from then)`
	if c := condition(t, p, v1alpha1.ConditionRunning); c.Message != want {
		t.Errorf("Running message %q, want %q", c.Message, want)
	}
}

// TestLockOptionRefusedMakesTheGroupNotReady: a group asking a lock for an exclusive hold the lock
// does not allow is not Ready and asks nothing.
func TestLockOptionRefusedMakesTheGroupNotReady(t *testing.T) {
	g := newGroup("a")
	g.Spec.Locks = []string{"nas"}
	g.Spec.LockOptions = []v1alpha1.LockOption{{Lock: "nas", Mode: v1alpha1.LockExclusive}}
	p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1)}, nil))
	if p.Create != nil || p.Status.LockWait != nil {
		t.Fatalf("a group refused by its lock starts or asks: create %v, lockWait %+v", p.Create, p.Status.LockWait)
	}
	c := condition(t, p, v1alpha1.ConditionReady)
	if c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonLockOptionRefused) ||
		c.Message != "spec.lockOptions: OaatLock nas allows no exclusive holder (its spec.exclusiveHolders is not Allowed)" {
		t.Fatalf("Ready = %+v", c)
	}
}
