package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The lock's reconciler is the one writer of a lock's status: these tests drive
// OaatLockReconciler.Reconcile over the fake API server and read the status it writes.

// objectRecorder records each event as "about Type Reason note", about being "OaatGroup ns/name"
// for a group and the lock's key for a lock.
type objectRecorder struct{ events []string }

func (r *objectRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	about := fmt.Sprintf("%T", regarding)
	switch o := regarding.(type) {
	case *v1alpha1.OaatGroup:
		about = "OaatGroup " + o.Namespace + "/" + o.Name
	case v1alpha1.Lock:
		about = o.LockKey()
	}
	r.events = append(r.events, about+" "+eventtype+" "+reason+" "+fmt.Sprintf(note, args...))
}

// take returns the events recorded since the last take, and forgets them.
func (r *objectRecorder) take() []string {
	out := r.events
	r.events = nil
	return out
}

// newLockReconciler is a reconciler of OaatLocks (ClusterOaatLocks when cluster) over c, which is
// both its cache and the API server, at the clock's time, recording its events.
func newLockReconciler(c client.Client, at clock.PassiveClock, cluster bool) (*OaatLockReconciler, *objectRecorder) {
	rec := &objectRecorder{}
	return &OaatLockReconciler{Client: c, APIReader: c, Recorder: rec, Cluster: cluster, Clock: at}, rec
}

// reconcileLock runs one pass of the reconciler of OaatLocks over the lock of that name.
func reconcileLock(c client.Client, at clock.PassiveClock, name string) (ctrl.Result, error) {
	lr, _ := newLockReconciler(c, at, false)
	return lr.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNamespace, Name: name}})
}

// reviewLock runs one pass of the lock reconciler over the lock, which must succeed.
func reviewLock(t *testing.T, lr *OaatLockReconciler, name string) ctrl.Result {
	t.Helper()
	key := client.ObjectKey{Namespace: testNamespace, Name: name}
	if lr.Cluster {
		key.Namespace = ""
	}
	res, err := lr.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatalf("the pass of lock %s: %v", name, err)
	}
	return res
}

// holderPods are the pods a lock lists as holders.
func holderPods(lock v1alpha1.Lock) []string {
	var pods []string
	for _, h := range lock.LockHolders() {
		pods = append(pods, h.Pod)
	}
	return pods
}

// requesting is group name of namespace ns naming nas, whose request since the time given asks
// for the run of item a in pod name-a-1.
func requesting(name string, since time.Duration) *v1alpha1.OaatGroup {
	g := builders.Group("a").Named(name).Locks("nas").Obj()
	g.Status.LockWait = &v1alpha1.LockWait{Since: *builders.At(since), Locks: []string{"nas"}, Item: "a", Pod: name + "-a-1"}
	return g
}

// setStatus writes the group's status as the mutation changes it.
func setStatus(t *testing.T, c client.Client, name string, mutate func(*v1alpha1.OaatGroupStatus)) {
	t.Helper()
	g := getGroup(t, c, name)
	mutate(&g.Status)
	if err := c.Status().Update(context.Background(), g); err != nil {
		t.Fatalf("writing the status of %s: %v", name, err)
	}
}

// startedIn makes the status say that the request's run started in its pod: currentRun, and no
// request left.
func startedIn(pod string) func(*v1alpha1.OaatGroupStatus) {
	return func(st *v1alpha1.OaatGroupStatus) {
		st.LockWait = nil
		st.CurrentRun = &v1alpha1.CurrentRun{Item: "a", PodName: pod, StartedAt: *builders.At(0)}
	}
}

// podIn creates the pod of a group's run in the phase.
func podIn(t *testing.T, c client.Client, group, name string, phase corev1.PodPhase) {
	t.Helper()
	pod := builders.Pod(name).OfGroup(group).Phase(phase).Obj()
	if err := c.Create(context.Background(), pod); err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
}

// TestLockGrantsInPlaceOrder: the lock grants the requests in the one global order (the earlier
// since, then the smaller namespace/name) while it has slots, listing each request's pod with the
// group's UID and item from the review's time; it keeps a holder while the group's status names its
// pod (as its request, then as its current run) and drops it once the status names it neither way
// (the run ended and was recorded, or the request was withdrawn), granting the next in order.
func TestLockGrantsInPlaceOrder(t *testing.T) {
	c := newFakeClient(t, interceptor.Funcs{}, builders.Lock("nas", 2),
		requesting("late", -time.Minute), requesting("tie-b", -2*time.Minute), requesting("tie-a", -2*time.Minute), requesting("later", 0))
	clk := clocktesting.NewFakeClock(builders.T0)
	lr, _ := newLockReconciler(c, clk, false)
	holders := func() []v1alpha1.LockHolder { return getLock(t, c, "nas").Status.Holders }

	reviewLock(t, lr, "nas")
	want := []v1alpha1.LockHolder{
		{Group: "tie-a", GroupUID: "tie-a-uid", Item: "a", Pod: "tie-a-a-1", Since: *builders.At(0)},
		{Group: "tie-b", GroupUID: "tie-b-uid", Item: "a", Pod: "tie-b-a-1", Since: *builders.At(0)},
	}
	if diff := cmp.Diff(want, holders(), builders.EquateTimes); diff != "" {
		t.Fatalf("holders (-want +got):\n%s", diff)
	}
	if l := getLock(t, c, "nas"); l.Status.HolderCount != 2 || l.Status.WaitingGroups != 4 {
		t.Errorf("holderCount %d, waitingGroups %d; want 2 holders, 4 waiting (the granted requests wait until their runs start)",
			l.Status.HolderCount, l.Status.WaitingGroups)
	}

	// tie-a starts its run; tie-b withdraws its request (suspended): tie-a keeps its slot, tie-b's
	// goes to late, which waited longer than later.
	clk.Step(time.Second)
	setStatus(t, c, "tie-a", startedIn("tie-a-a-1"))
	podIn(t, c, "tie-a", "tie-a-a-1", corev1.PodRunning)
	setStatus(t, c, "tie-b", func(st *v1alpha1.OaatGroupStatus) { st.LockWait = nil })
	reviewLock(t, lr, "nas")
	if got := holderPods(getLock(t, c, "nas")); !slices.Equal(got, []string{"late-a-1", "tie-a-a-1"}) {
		t.Fatalf("after tie-a started and tie-b withdrew: holders %v, want late's request and tie-a's run", got)
	}
	if h := holders()[0]; !h.Since.Equal(builders.At(time.Second)) {
		t.Errorf("late's slot since %v, want the review's time %v", h.Since, builders.At(time.Second))
	}

	// tie-a's run ends and is recorded: its slot goes to later.
	clk.Step(time.Second)
	setStatus(t, c, "tie-a", func(st *v1alpha1.OaatGroupStatus) { st.CurrentRun = nil })
	reviewLock(t, lr, "nas")
	if got := holderPods(getLock(t, c, "nas")); !slices.Equal(got, []string{"late-a-1", "later-a-1"}) {
		t.Fatalf("after tie-a's run was recorded: holders %v, want late's and later's requests", got)
	}
	if w := getLock(t, c, "nas").Status.WaitingGroups; w != 2 {
		t.Errorf("waitingGroups %d, want 2", w)
	}
}

// TestLockDropsTheSlotOfAnEndedRun: a run whose pod has ended holds no slot, even while the
// group's status still names it (a group whose new status the API server refuses); one whose pod
// is live keeps it.
func TestLockDropsTheSlotOfAnEndedRun(t *testing.T) {
	for _, tc := range []struct {
		phase corev1.PodPhase
		kept  bool
	}{
		{phase: corev1.PodRunning, kept: true},
		{phase: corev1.PodSucceeded},
		{phase: corev1.PodFailed},
	} {
		t.Run(string(tc.phase), func(t *testing.T) {
			g := builders.Group("a").Named("g").Locks("nas").RunningIn("a", "g-a-1", builders.At(-time.Minute)).Obj()
			c := newFakeClient(t, interceptor.Funcs{}, g, requesting("h", -time.Minute),
				builders.Lock("nas", 1, builders.Holder("g", "g-a-1", builders.At(-time.Minute))))
			podIn(t, c, "g", "g-a-1", tc.phase)
			lr, _ := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), false)
			reviewLock(t, lr, "nas")
			want := []string{"h-a-1"}
			if tc.kept {
				want = []string{"g-a-1"}
			}
			if got := holderPods(getLock(t, c, "nas")); !slices.Equal(got, want) {
				t.Errorf("pod %s: holders %v, want %v", tc.phase, got, want)
			}
		})
	}
}

// TestLockMovesTheGrantToTheNewPod: a request whose item changed while it waited (an OaatRun
// arrived) asks for another pod; the lock drops the grant of the old pod and grants the new one,
// the group keeping its place before a later waiter.
func TestLockMovesTheGrantToTheNewPod(t *testing.T) {
	g := requesting("g", -time.Minute)
	c := newFakeClient(t, interceptor.Funcs{}, g, requesting("h", 0),
		builders.Lock("nas", 1, v1alpha1.LockHolder{Group: "g", GroupUID: "g-uid", Item: "a", Pod: "g-a-1", Since: *builders.At(-time.Second)}))
	setStatus(t, c, "g", func(st *v1alpha1.OaatGroupStatus) { st.LockWait.Item, st.LockWait.Pod = "b", "g-b-1" })
	lr, _ := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), false)
	reviewLock(t, lr, "nas")
	want := []v1alpha1.LockHolder{{Group: "g", GroupUID: "g-uid", Item: "b", Pod: "g-b-1", Since: *builders.At(0)}}
	if diff := cmp.Diff(want, getLock(t, c, "nas").Status.Holders, builders.EquateTimes); diff != "" {
		t.Errorf("holders (-want +got):\n%s", diff)
	}
}

// TestLockYieldedGrantGoesToTheEarlierWaiter: a request that yields the lock loses its grant,
// which goes to the earlier waiter it yields to; it is not granted again while it yields.
func TestLockYieldedGrantGoesToTheEarlierWaiter(t *testing.T) {
	later := requesting("later", 0)
	later.Spec.Locks = []string{"db", "nas"}
	later.Status.LockWait.Locks, later.Status.LockWait.Yielded = []string{"db", "nas"}, []string{"nas"}
	c := newFakeClient(t, interceptor.Funcs{}, later, requesting("earlier", -time.Minute),
		builders.Lock("nas", 1, v1alpha1.LockHolder{Group: "later", GroupUID: "later-uid", Item: "a", Pod: "later-a-1", Since: *builders.At(-time.Second)}))
	lr, _ := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), false)
	reviewLock(t, lr, "nas")
	if got := holderPods(getLock(t, c, "nas")); !slices.Equal(got, []string{"earlier-a-1"}) {
		t.Fatalf("holders %v, want the earlier waiter's request", got)
	}
	setStatus(t, c, "earlier", func(st *v1alpha1.OaatGroupStatus) { st.LockWait = nil })
	reviewLock(t, lr, "nas")
	if got := holderPods(getLock(t, c, "nas")); len(got) != 0 {
		t.Fatalf("holders %v once the earlier waiter withdrew, want none: later still yields nas", got)
	}
}

// TestLockWaitingCountRateLimited: a change of a lock's waiting count between nonzero values is
// written at most once per waitingRefresh (the reconcile asks to come back when it may write); a
// change to or from zero, and a change of its holders, are written at once.
func TestLockWaitingCountRateLimited(t *testing.T) {
	lock := builders.Lock("nas", 1)
	waiter := func(name string) *v1alpha1.OaatGroup {
		return builders.Group("a").Named(name).Locks("nas").WaitingForLocks(builders.At(0)).Obj()
	}
	writes := 0
	c := newFakeClient(t, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			writes++
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}, lock, waiter("g1"))
	clk := clocktesting.NewFakeClock(builders.T0)
	r, _ := newLockReconciler(c, clk, false)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(lock)}
	reconcile := func(step string) ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return res
	}
	waiting := func() int32 {
		t.Helper()
		return getLock(t, c, "nas").Status.WaitingGroups
	}

	reconcile("first count")
	if writes != 1 || waiting() != 1 {
		t.Fatalf("first change: %d writes, waiting %d; want 1 write, waiting 1", writes, waiting())
	}
	if err := c.Create(context.Background(), waiter("g2")); err != nil {
		t.Fatal(err)
	}
	clk.Step(3 * time.Second)
	if res := reconcile("second waiter, 3 s later"); writes != 1 || res.RequeueAfter != waitingRefresh-3*time.Second {
		t.Fatalf("a count change 3 s after a write: %d writes, requeue after %v; want 1 write, requeue after %v", writes, res.RequeueAfter, waitingRefresh-3*time.Second)
	}
	clk.Step(waitingRefresh - 3*time.Second)
	reconcile("the requeue")
	if writes != 2 || waiting() != 2 {
		t.Fatalf("after waitingRefresh: %d writes, waiting %d; want 2 writes, waiting 2", writes, waiting())
	}
	reconcile("nothing changed")
	if writes != 2 {
		t.Fatalf("no change: %d writes, want 2", writes)
	}

	// A grant within the rate limit is written at once, the count with it.
	writes = 0
	clk.Step(time.Second)
	setStatus(t, c, "g1", func(st *v1alpha1.OaatGroupStatus) { st.LockWait.Item, st.LockWait.Pod = "a", "g1-a-1" })
	writes = 0
	reconcile("a grant")
	if writes != 1 || !slices.Equal(holderPods(getLock(t, c, "nas")), []string{"g1-a-1"}) {
		t.Fatalf("a grant within the rate limit: %d writes, holders %v; want 1 write, g1's request", writes, holderPods(getLock(t, c, "nas")))
	}

	// Nobody waits any more: written at once, within the rate limit; g1's withdrawn request loses
	// its grant.
	for _, name := range []string{"g1", "g2"} {
		setStatus(t, c, name, func(st *v1alpha1.OaatGroupStatus) { st.LockWait = nil })
	}
	writes = 0
	clk.Step(time.Second)
	reconcile("no waiter")
	if writes != 1 || waiting() != 0 || len(getLock(t, c, "nas").Status.Holders) != 0 {
		t.Fatalf("the count dropping to zero: %d writes, waiting %d, holders %v; want 1 write, waiting 0, no holder",
			writes, waiting(), holderPods(getLock(t, c, "nas")))
	}

	// A holder whose group is gone (and its pod too) is released at once, within the rate limit.
	gone := getLock(t, c, "nas")
	gone.Status.Holders = []v1alpha1.LockHolder{builders.Holder("deleted", "deleted-x-1", builders.At(0))}
	if err := c.Status().Update(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	writes = 0
	clk.Step(time.Second)
	reconcile("a stale holder")
	if writes != 1 || len(getLock(t, c, "nas").Status.Holders) != 0 {
		t.Fatalf("a holder change within the rate limit: %d writes, holders %v; want 1 write, none", writes, holderPods(getLock(t, c, "nas")))
	}
}

// TestLockAssertsALiveRunOverCapacity: a lock that lacks the live run of a group naming it (named
// by an edit while the run went on, or created again) lists it, over its capacity if need be,
// with one LockOverCapacity event on the group whose run it listed over the capacity, and grants
// nothing while it is full.
func TestLockAssertsALiveRunOverCapacity(t *testing.T) {
	g := builders.Group("a").Named("g").Locks("nas").RunningIn("a", "g-a-1", builders.At(-time.Minute)).Obj()
	h := builders.Group("a").Named("h").Locks("nas").RunningIn("a", "h-a-1", builders.At(-time.Minute)).Obj()
	c := newFakeClient(t, interceptor.Funcs{}, g, h, requesting("k", -time.Hour), builders.Lock("nas", 1))
	podIn(t, c, "g", "g-a-1", corev1.PodRunning)
	podIn(t, c, "h", "h-a-1", corev1.PodRunning)
	lr, rec := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), false)
	reviewLock(t, lr, "nas")
	want := []v1alpha1.LockHolder{
		{Group: "g", GroupUID: "g-uid", Item: "a", Pod: "g-a-1", Since: *builders.At(-time.Minute)},
		{Group: "h", GroupUID: "h-uid", Item: "a", Pod: "h-a-1", Since: *builders.At(-time.Minute)},
	}
	if diff := cmp.Diff(want, getLock(t, c, "nas").Status.Holders, builders.EquateTimes); diff != "" {
		t.Fatalf("holders (-want +got):\n%s", diff)
	}
	events := rec.take()
	if len(events) != 1 || !strings.HasPrefix(events[0], "OaatGroup ns/h Warning "+string(v1alpha1.ReasonLockOverCapacity)+" OaatLock nas holds 2 runs, over its capacity of 1") {
		t.Fatalf("events %q, want one LockOverCapacity on group h", events)
	}
	reviewLock(t, lr, "nas")
	if events := rec.take(); len(events) != 0 {
		t.Errorf("the next review reports again: %q", events)
	}
	if got := holderPods(getLock(t, c, "nas")); slices.Contains(got, "k-a-1") {
		t.Errorf("holders %v: k's request granted over the capacity", got)
	}
}

// TestDeletingGroupSlotFollowsItsPod: a group being deleted (another tool's finalizer keeps it)
// keeps its slot while its pod is live, the lock looking again soon, and loses it once the pod
// has ended; its request counts no more, and is granted nothing.
func TestDeletingGroupSlotFollowsItsPod(t *testing.T) {
	g := builders.Group("a").Named("g").Locks("nas").RunningIn("a", "g-a-1", builders.At(-time.Minute)).Obj()
	g.Finalizers = []string{"example.com/keep"}
	w := requesting("w", -time.Hour)
	w.Finalizers = []string{"example.com/keep"}
	c := newFakeClient(t, interceptor.Funcs{}, g, w, requesting("h", 0),
		builders.Lock("nas", 1, v1alpha1.LockHolder{Group: "g", GroupUID: "g-uid", Item: "a", Pod: "g-a-1", Since: *builders.At(-time.Minute)}))
	podIn(t, c, "g", "g-a-1", corev1.PodRunning)
	for _, name := range []string{"g", "w"} {
		if err := c.Delete(context.Background(), getGroup(t, c, name)); err != nil {
			t.Fatal(err)
		}
	}
	clk := clocktesting.NewFakeClock(builders.T0)
	lr, _ := newLockReconciler(c, clk, false)
	if res := reviewLock(t, lr, "nas"); res.RequeueAfter != orphanPodRetry {
		t.Fatalf("while g's pod runs: %+v, want a look again after %s", res, orphanPodRetry)
	}
	if l := getLock(t, c, "nas"); !slices.Equal(holderPods(l), []string{"g-a-1"}) || l.Status.WaitingGroups != 1 {
		t.Fatalf("while g's pod runs: holders %v, waitingGroups %d; want g's run, and h alone counted waiting", holderPods(l), l.Status.WaitingGroups)
	}
	finishPod(t, c, "g-a-1", 0, builders.T0)
	clk.Step(orphanPodRetry)
	if res := reviewLock(t, lr, "nas"); res.RequeueAfter != 0 {
		t.Errorf("once g's pod ended: %+v, want no look again", res)
	}
	if got := holderPods(getLock(t, c, "nas")); !slices.Equal(got, []string{"h-a-1"}) {
		t.Fatalf("once g's pod ended: holders %v, want h's request (not w's, being deleted)", got)
	}
}

// TestLockDropsTheSlotOfAGroupGone: the slot of a group gone, or replaced by another of the same
// name (another UID), goes once its pod is gone or ended, and stays while it is live.
func TestLockDropsTheSlotOfAGroupGone(t *testing.T) {
	replaced := builders.Group("a").Named("g").Locks("nas").UID("new-uid").Obj()
	c := newFakeClient(t, interceptor.Funcs{}, replaced, builders.Lock("nas", 3,
		builders.Holder("g", "g-a-1", builders.At(-time.Minute)),
		builders.Holder("gone", "gone-a-1", builders.At(-time.Minute)),
		builders.Holder("live", "live-a-1", builders.At(-time.Minute))))
	podIn(t, c, "live", "live-a-1", corev1.PodRunning)
	podIn(t, c, "gone", "gone-a-1", corev1.PodSucceeded)
	lr, _ := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), false)
	if res := reviewLock(t, lr, "nas"); res.RequeueAfter != orphanPodRetry {
		t.Errorf("a slot kept for a live pod of a group gone: %+v, want a look again after %s", res, orphanPodRetry)
	}
	if got := holderPods(getLock(t, c, "nas")); !slices.Equal(got, []string{"live-a-1"}) {
		t.Errorf("holders %v, want only the live pod's", got)
	}
}

// TestLockFollowsItsCapacitySchedule: a lock of capacity 2 with a window of 1 slot from 11:00 to
// 13:00 grants one request of two at noon, writes the capacity in force and the next change, and
// asks to be reviewed at that change; at 13:00 it grants the other, and names the next change, the
// window's start the next day.
func TestLockFollowsItsCapacitySchedule(t *testing.T) {
	nas := builders.Lock("nas", 2)
	nas.Spec.CapacitySchedule = []v1alpha1.CapacityWindow{{Start: "11:00", End: "13:00", Capacity: ptr.To[int32](1)}}
	c := newFakeClient(t, interceptor.Funcs{}, nas, requesting("first", -2*time.Minute), requesting("second", -time.Minute))
	clk := clocktesting.NewFakeClock(builders.T0)
	lr, _ := newLockReconciler(c, clk, false)

	res := reviewLock(t, lr, "nas")
	l := getLock(t, c, "nas")
	if got := holderPods(l); !slices.Equal(got, []string{"first-a-1"}) {
		t.Fatalf("at noon: holders %v, want first's request alone", got)
	}
	want := v1alpha1.CapacityStatus{CapacityInForce: ptr.To[int32](1),
		NextCapacityChange: &v1alpha1.CapacityChange{At: builders.At(time.Hour), Capacity: ptr.To[int32](2)}}
	if diff := cmp.Diff(want, l.Status.CapacityStatus, builders.EquateTimes); diff != "" {
		t.Errorf("at noon: capacity status (-want +got):\n%s", diff)
	}
	if res.RequeueAfter != time.Hour {
		t.Errorf("at noon: requeued after %v, want 1h (the window's end)", res.RequeueAfter)
	}

	clk.SetTime(builders.T0.Add(time.Hour))
	reviewLock(t, lr, "nas")
	l = getLock(t, c, "nas")
	if got := holderPods(l); !slices.Equal(got, []string{"first-a-1", "second-a-1"}) {
		t.Fatalf("at 13:00: holders %v, want both requests", got)
	}
	want = v1alpha1.CapacityStatus{CapacityInForce: ptr.To[int32](2),
		NextCapacityChange: &v1alpha1.CapacityChange{At: builders.At(23 * time.Hour), Capacity: ptr.To[int32](1)}}
	if diff := cmp.Diff(want, l.Status.CapacityStatus, builders.EquateTimes); diff != "" {
		t.Errorf("at 13:00: capacity status (-want +got):\n%s", diff)
	}
}
