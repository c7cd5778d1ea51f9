package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duepriority"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The unit tests of issue 25: a lock's holders follow the group's live runs, whatever refuses or
// re-creates what.

// refuseStatusOf makes the API server refuse, as invalid, every status of group that would start
// a run (its planned status names a current run), and counts the status writes of each lock.
func refuseStatusOf(group string, lockWrites map[string]int) interceptor.Funcs {
	return interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		switch o := obj.(type) {
		case *v1alpha1.OaatGroup:
			if o.Name == group && o.Status.CurrentRun != nil {
				return apierrors.NewInvalid(groupKind, o.Name, field.ErrorList{field.Invalid(field.NewPath("status", "currentRun"), "", "no")})
			}
		case v1alpha1.Lock:
			lockWrites[o.GetName()]++
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}
}

// Defects 1 and 2, with one writer per lock: a group whose status the API server refuses does not
// keep the slot granted to its request (another group naming the lock then starts). Within its
// retry wait its passes start nothing and withdraw the request, which the lock then drops; and it
// does not ask again at every wake-up while the refusal lasts: the lock grants it nothing and is
// not written for it until its retry wait is over.
func TestRefusedStatusWithdrawsTheRequest(t *testing.T) {
	lockWrites := map[string]int{}
	server, r := sharingDB(t, refuseStatusOf("g", lockWrites))

	pass := func(group string) {
		t.Helper()
		if _, err := r.reconcile(t, group); err != nil {
			t.Fatalf("%s's pass: %v", group, err)
		}
	}
	review := func() {
		t.Helper()
		if _, err := reconcileLock(server, r.clock, "db"); err != nil {
			t.Fatalf("db's pass: %v", err)
		}
	}
	pass("g")
	review()
	if got := holderPods(getLock(t, server, "db")); len(got) != 1 {
		t.Fatalf("db lists %v, want g's request granted", got)
	}
	pass("g") // the start: refused
	if pods := listPods(t, server); len(pods) != 0 || getGroup(t, server, "g").Status.CurrentRun != nil {
		t.Fatalf("pods %v, currentRun %+v after g's status was refused", podNames(pods), getGroup(t, server, "g").Status.CurrentRun)
	}
	if ready := findCondition(getGroup(t, server, "g"), v1alpha1.ConditionReady); ready == nil || ready.Reason != string(v1alpha1.ReasonStatusRejected) {
		t.Fatalf("Ready = %+v, want StatusRejected", ready)
	}
	// The fallback's write wakes g: its pass within the retry wait withdraws the request.
	r.clock.Step(time.Second)
	pass("g")
	if w := getGroup(t, server, "g").Status.LockWait; w != nil {
		t.Fatalf("g still asks %+v within its retry wait", w)
	}
	review()
	if got := holderPods(getLock(t, server, "db")); len(got) != 0 {
		t.Fatalf("db keeps %v after g withdrew its request", got)
	}
	writes := lockWrites["db"]
	for range 3 {
		r.clock.Step(time.Second)
		pass("g")
		review()
	}
	if n := lockWrites["db"] - writes; n != 0 || getGroup(t, server, "g").Status.LockWait != nil {
		t.Errorf("%d writes of db in 3 s of refusals, g's request %+v: g asked again within its retry wait", n, getGroup(t, server, "g").Status.LockWait)
	}
	startRun(t, r, server, "h")
}

// startRun starts a run of the group and returns its pod: its pass asks for its locks, each lock's
// reconciler grants the request, and its next pass starts the run (a group naming no lock starts
// at its first pass).
func startRun(t *testing.T, r testReconciler, c client.Client, group string) string {
	t.Helper()
	for range 2 {
		if _, err := r.reconcile(t, group); err != nil {
			t.Fatalf("%s's pass: %v", group, err)
		}
		g := getGroup(t, c, group)
		if cr := g.Status.CurrentRun; cr != nil {
			return cr.PodName
		}
		reviewLocksOf(t, c, r.clock, g)
	}
	g := getGroup(t, c, group)
	t.Fatalf("%s did not start a run: lockWait %+v", group, g.Status.LockWait)
	return ""
}

// reviewLocksOf runs the pass of the reconciler of each lock the group names.
func reviewLocksOf(t *testing.T, c client.Client, at clock.PassiveClock, g *v1alpha1.OaatGroup) {
	t.Helper()
	locks, _ := newLockReconciler(c, at, false)
	clusterLocks, _ := newLockReconciler(c, at, true)
	for _, name := range g.Spec.Locks {
		reviewLock(t, locks, name)
	}
	for _, name := range g.Spec.ClusterLocks {
		reviewLock(t, clusterLocks, name)
	}
}

// sharingDB is a server holding groups g and h, each naming the OaatLock db of capacity 1, with
// the API server's behaviour changed by funcs, and a reconciler of groups on it.
func sharingDB(t *testing.T, funcs interceptor.Funcs) (client.WithWatch, testReconciler) {
	t.Helper()
	g, h := builders.Group("a").Named("g").Obj(), builders.Group("b").Named("h").Obj()
	g.Spec.Locks, h.Spec.Locks = []string{"db"}, []string{"db"}
	server := newFakeClient(t, funcs, builders.Type().Obj(), g, h, builders.Lock("db", 1))
	return server, newTestReconciler(server, server)
}

// deleteHeldBack deletes the group while another tool's finalizer keeps it (Argo CD's, a backup
// tool's, a held foreground deletion).
func deleteHeldBack(t *testing.T, c client.Client, name string) {
	t.Helper()
	group := getGroup(t, c, name)
	group.Finalizers = append(group.Finalizers, "example.com/keep")
	if err := c.Update(context.Background(), group); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(context.Background(), getGroup(t, c, name)); err != nil {
		t.Fatal(err)
	}
}

// Defect 3: a lock deleted and created again while a run holds it (kubectl replace --force, a
// GitOps re-create, a restore) comes back without holders; the lock's next review lists the live
// run again, and another group naming the lock waits.
func TestLockRecreatedWhileHeld(t *testing.T) {
	server, r := sharingDB(t, interceptor.Funcs{})
	pod := startRun(t, r, server, "g")

	ctx := context.Background()
	if err := server.Delete(ctx, getLock(t, server, "db")); err != nil {
		t.Fatal(err)
	}
	if err := server.Create(ctx, builders.Lock("db", 1)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.reconcile(t, "h"); err != nil {
			t.Fatalf("h's pass: %v", err)
		}
		if _, err := reconcileLock(server, r.clock, "db"); err != nil {
			t.Fatalf("db's pass: %v", err)
		}
	}
	if cr := getGroup(t, server, "h").Status.CurrentRun; cr != nil {
		t.Errorf("h started %s beside g's live %s under capacity 1", cr.PodName, pod)
	}
	if w := getGroup(t, server, "h").Status.LockWait; w == nil {
		t.Errorf("h does not wait for db")
	}
	if got := holderPods(getLock(t, server, "db")); !slices.Equal(got, []string{pod}) {
		t.Errorf("db lists %v after its review, want g's live run %s", got, pod)
	}
}

// Defect 4: a lock named by an edit while runs go on counts them: its review lists each run, over
// its capacity if need be (reported once, by an event on the group), and no group naming it
// starts until enough of them have ended.
func TestLockAddedToRunningGroups(t *testing.T) {
	g, h, k := builders.Group("a").Named("g").Obj(), builders.Group("b").Named("h").Obj(), builders.Group("c").Named("k").Obj()
	k.Spec.Locks = []string{"db"}
	server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), g, h, k, builders.Lock("db", 1))
	r := newTestReconciler(server, server)
	gPod, hPod := startRun(t, r, server, "g"), startRun(t, r, server, "h")

	ctx := context.Background()
	for _, name := range []string{"g", "h"} {
		group := getGroup(t, server, name)
		group.Spec.Locks = []string{"db"}
		if err := server.Update(ctx, group); err != nil {
			t.Fatal(err)
		}
	}
	lr, rec := newLockReconciler(server, r.clock, false)
	pass := func(group string) {
		t.Helper()
		if _, err := r.reconcile(t, group); err != nil {
			t.Fatalf("%s's pass: %v", group, err)
		}
	}
	for range 2 {
		pass("k")
		reviewLock(t, lr, "db")
	}
	if cr := getGroup(t, server, "k").Status.CurrentRun; cr != nil {
		t.Errorf("k started %s beside %s and %s, which now name db of capacity 1", cr.PodName, gPod, hPod)
	}
	if got := holderPods(getLock(t, server, "db")); !slices.Equal(got, []string{gPod, hPod}) {
		t.Errorf("db lists %v, want both live runs %s and %s", got, gPod, hPod)
	}
	var over []string
	for _, e := range rec.take() {
		if strings.Contains(e, string(v1alpha1.ReasonLockOverCapacity)) {
			over = append(over, e)
		}
	}
	if len(over) != 1 || !strings.HasPrefix(over[0], "OaatGroup ns/h ") {
		t.Errorf("LockOverCapacity events %q, want one, on group h", over)
	}

	// g's run ends: db still holds h's, at its capacity, and k waits; h's ends too: k starts.
	finishPod(t, server, gPod, 0, builders.T0)
	pass("g")
	reviewLock(t, lr, "db")
	pass("k")
	if got := holderPods(getLock(t, server, "db")); !slices.Equal(got, []string{hPod}) || getGroup(t, server, "k").Status.CurrentRun != nil {
		t.Fatalf("after g's run: db lists %v, k runs %+v; want h's run alone and k waiting", got, getGroup(t, server, "k").Status.CurrentRun)
	}
	finishPod(t, server, hPod, 0, builders.T0)
	pass("h")
	reviewLock(t, lr, "db")
	pass("k")
	if cr := getGroup(t, server, "k").Status.CurrentRun; cr == nil || !slices.Equal(holderPods(getLock(t, server, "db")), []string{cr.PodName}) {
		t.Errorf("after both runs: k runs %+v, db lists %v; want k's run holding db", cr, holderPods(getLock(t, server, "db")))
	}
}

// Defect 5: a waiting group that is being deleted (another tool's finalizer keeps it) loses its
// place: the free slot goes to the next waiter, and the deleting group is not counted waiting.
func TestDeletingWaiterLosesItsPlace(t *testing.T) {
	g, h := builders.Group("a").Named("g").Obj(), builders.Group("b").Named("h").Obj()
	g.Spec.Locks, h.Spec.Locks = []string{"db"}, []string{"db"}
	earlier := metav1.NewTime(builders.T0.Add(-time.Hour))
	g.Status.LockWait = &v1alpha1.LockWait{Since: earlier, Locks: []string{"db"}, Item: "a", Pod: "g-a-1"}
	g.Finalizers = []string{"example.com/keep"}
	server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), g, h, builders.Lock("db", 1))
	if err := server.Delete(context.Background(), getGroup(t, server, "g")); err != nil {
		t.Fatal(err)
	}
	r := newTestReconciler(server, server)
	pod := startRun(t, r, server, "h")
	if _, err := reconcileLock(server, r.clock, "db"); err != nil {
		t.Fatal(err)
	}
	if l := getLock(t, server, "db"); !slices.Equal(holderPods(l), []string{pod}) || l.Status.WaitingGroups != 0 {
		t.Errorf("db lists %v, waitingGroups %d; want h's run alone, and g (being deleted) not counted", holderPods(l), l.Status.WaitingGroups)
	}
}

// Defect 6: a ClusterOaatLock's namespaceSelector fails closed. A namespace that the cache does
// not show yet is read from the API server (a NotIn selector must not take it for a namespace
// without labels); one that cannot be read at all permits no lock.
func TestClusterLockNamespaceFailsClosed(t *testing.T) {
	lock := builders.ClusterLock("db", 1)
	lock.Spec.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}}}
	for _, tc := range []struct {
		name      string
		apiServer []client.Object // what the API server has beyond what the cache has
	}{
		{name: "namespace not in the cache yet", apiServer: []client.Object{testNamespaceObject(map[string]string{"tier": "prod"})}},
		{name: "namespace not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := builders.Group("a").Named("g").Obj()
			g.Spec.ClusterLocks = []string{"db"}
			objs := []client.Object{builders.Type().Obj(), g, lock.DeepCopy()}
			cache := newFakeClient(t, interceptor.Funcs{}, objs...)
			apiServer := newFakeClient(t, interceptor.Funcs{}, append(objs, tc.apiServer...)...)
			r := newTestReconciler(cache, apiServer)
			if _, err := r.reconcile(t, "g"); err != nil {
				t.Fatalf("pass: %v", err)
			}
			got := getGroup(t, cache, "g")
			if got.Status.CurrentRun != nil || got.Status.LockWait != nil {
				t.Errorf("currentRun %+v, lockWait %+v in a namespace db's selector excludes; want no run and no request", got.Status.CurrentRun, got.Status.LockWait)
			}
			if ready := findCondition(got, v1alpha1.ConditionReady); ready == nil || ready.Reason != string(v1alpha1.ReasonLockNotPermitted) {
				t.Errorf("Ready = %+v, want LockNotPermitted", ready)
			}
		})
	}
}

// Defect 7: an installation that watches only some namespaces cannot count a ClusterOaatLock's
// waiters in the others, and leaves its waitingGroups alone: two such installations sharing the
// lock no longer write their own counts over each other's (1, 0, 1, 0 ...), each write waking the
// other and every group naming the lock. Its lock reconciler writes its own entry of the waiting
// (status.installationClaims) instead, beside the other installations' entries. One that watches
// all namespaces counts the waiters and writes no entry, leaving the others' as they are.
func TestClusterLockWaitingCountOfSomeNamespaces(t *testing.T) {
	other := v1alpha1.InstallationWaiting{Installation: "team-b", Waiting: 2, Since: metav1.NewTime(builders.T0.Add(-time.Minute)),
		RenewedAt: metav1.NewTime(builders.T0)}
	for _, tc := range []struct {
		name         string
		installation string
		want         int32
		wantClaims   []string
	}{
		{name: "some namespaces", installation: testNamespace, want: 3,
			wantClaims: []string{testNamespace + " 1 waiting since " + builders.T0.Format(time.RFC3339), "team-b 2 waiting since " + builders.T0.Add(-time.Minute).Format(time.RFC3339)}},
		{name: "all namespaces", want: 1, wantClaims: []string{"team-b 2 waiting since " + builders.T0.Add(-time.Minute).Format(time.RFC3339)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lock := builders.ClusterLock("db", 1)
			lock.Status.WaitingGroups = 3 // another installation's count
			lock.Status.InstallationsWaiting = []v1alpha1.InstallationWaiting{other}
			g := builders.Group("a").Named("g").Obj()
			g.Spec.ClusterLocks = []string{"db"}
			g.Status.LockWait = &v1alpha1.LockWait{Since: metav1.NewTime(builders.T0), Locks: []string{v1alpha1.ClusterLockKey("db")}}
			writes := map[string]int{}
			c := newFakeClient(t, refuseStatusOf("", writes), lock, g)
			r, _ := newLockReconciler(c, newTestReconciler(c, c).clock, true)
			r.Installation = tc.installation
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "db"}}); err != nil {
				t.Fatal(err)
			}
			got := getClusterLock(t, c, "db").Status
			var claims []string
			for _, cl := range got.InstallationsWaiting {
				claims = append(claims, fmt.Sprintf("%s %d waiting since %s", cl.Installation, cl.Waiting, cl.Since.UTC().Format(time.RFC3339)))
			}
			if got.WaitingGroups != tc.want || writes["db"] != 1 || !slices.Equal(claims, tc.wantClaims) {
				t.Errorf("waitingGroups %d, claims %q after %d writes; want %d, %q after 1", got.WaitingGroups, claims, writes["db"], tc.want, tc.wantClaims)
			}
		})
	}
}

// queued are the names of the groups queued, in the order queued.
func queued(t *testing.T, q priorityqueue.PriorityQueue[reconcile.Request]) []string {
	t.Helper()
	var names []string
	for q.Len() > 0 {
		req, _, _ := q.GetWithPriority()
		names = append(names, req.Name)
		q.Done(req)
	}
	slices.Sort(names)
	return names
}

// A change of a lock's holders wakes only the groups whose holder it added or removed (a grant to
// start with, a drop seen through); a change of the breaker it carries wakes every group naming it
// or holding it, which follows it; its creation wakes every group naming it.
func TestLockChangeWakesTheGroupsItConcerns(t *testing.T) {
	var objs []client.Object
	for _, name := range []string{"g", "h", "w1", "w2"} {
		objs = append(objs, builders.Group("a").Named(name).Locks("db").Obj())
	}
	c := newFakeClient(t, interceptor.Funcs{}, objs...)
	r := newTestReconciler(c, c).OaatGroupReconciler
	lock := func(holders ...string) *v1alpha1.OaatLock {
		l := builders.Lock("db", 2)
		l.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
		for _, g := range holders {
			l.Status.Holders = append(l.Status.Holders, builders.Holder(g, g+"-pod", builders.At(0)))
		}
		return l
	}
	moved := lock("g", "w1")
	moved.Status.Holders[1].Pod = "w1-other-pod"
	opened := lock("g")
	opened.Status.CircuitBreaker = &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/g"}
	h := lockHandler{prioritized{r: r, toGroups: r.groupsOfLock, floor: duepriority.Unknown}}
	for _, tc := range []struct {
		name          string
		before, after *v1alpha1.OaatLock
		want          []string
	}{
		{name: "a grant", before: lock("g"), after: lock("g", "w1"), want: []string{"w1"}},
		{name: "a drop and a grant", before: lock("g"), after: lock("w1"), want: []string{"g", "w1"}},
		{name: "a grant moved to another pod", before: lock("g", "w1"), after: moved, want: []string{"w1"}},
		{name: "no holder changed (the waiting count)", before: lock("g"), after: func() *v1alpha1.OaatLock {
			l := lock("g")
			l.Status.WaitingGroups = 3
			return l
		}()},
		{name: "the breaker it carries opened", before: lock("g"), after: opened, want: []string{"g", "h", "w1", "w2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := priorityqueue.New[reconcile.Request]("test-lock-change")
			defer q.ShutDown()
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: tc.before, ObjectNew: tc.after}, q)
			if got := queued(t, q); !slices.Equal(got, tc.want) {
				t.Errorf("a change wakes %v, want %v", got, tc.want)
			}
		})
	}
	q := priorityqueue.New[reconcile.Request]("test-lock-create")
	defer q.ShutDown()
	h.Create(context.Background(), event.CreateEvent{Object: builders.Lock("db", 1)}, q)
	if got := queued(t, q); !slices.Equal(got, []string{"g", "h", "w1", "w2"}) {
		t.Errorf("a creation wakes %v, want every group naming the lock", got)
	}
}

// A group that begins to wait for a lock wakes, beside itself, the groups holding a grant of that
// lock while they wait for another (they may have to yield it to it): the lock does not change,
// so no lock event wakes them. A group that does not wait wakes itself only.
func TestWaitingGroupWakesTheYielders(t *testing.T) {
	waiting := func(name string, since time.Duration, keys ...string) *v1alpha1.OaatGroup {
		g := builders.Group("a").Named(name).Locks(keys...).Obj()
		g.Status.LockWait = &v1alpha1.LockWait{Since: *builders.At(since), Locks: keys, Item: "a", Pod: name + "-a-1"}
		return g
	}
	w := waiting("w", -time.Hour, "nas")
	y := waiting("y", 0, "db") // holds nas's grant, waits for db
	y.Spec.Locks = []string{"db", "nas"}
	running := builders.Group("a").Named("running").Locks("nas").RunningIn("a", "running-a-1", builders.At(0)).Obj()
	idle := builders.Group("a").Named("idle").Locks("nas").Obj()
	deleting := waiting("deleting", 0, "db")
	deleting.Spec.Locks = []string{"db", "nas"}
	deleting.Finalizers = []string{"example.com/keep"}
	nas := builders.Lock("nas", 4, builders.Holder("y", "y-a-1", builders.At(0)), builders.Holder("running", "running-a-1", builders.At(0)),
		builders.Holder("deleting", "deleting-a-1", builders.At(0)), builders.Holder("w", "w-other", builders.At(0)))
	c := newFakeClient(t, interceptor.Funcs{}, w, y, running, idle, deleting, nas)
	if err := c.Delete(context.Background(), getGroup(t, c, "deleting")); err != nil {
		t.Fatal(err)
	}
	r := newTestReconciler(c, c).OaatGroupReconciler
	names := func(requests []reconcile.Request) []string {
		var out []string
		for _, req := range requests {
			out = append(out, req.Name)
		}
		return out
	}
	if got := names(r.selfAndYielders(context.Background(), getGroup(t, c, "w"))); !slices.Equal(got, []string{"w", "y"}) {
		t.Errorf("w's change wakes %v, want w and y (which holds nas while it waits); not the running, the deleting, nor w itself twice", got)
	}
	if got := names(r.selfAndYielders(context.Background(), idle)); !slices.Equal(got, []string{"idle"}) {
		t.Errorf("a group not waiting wakes %v, want itself", got)
	}
}

// An installation that watches only some namespaces leaves alone the groups of the others, which
// a ClusterOaatLock's event (its holders) or a Namespace's names: its cache cannot read them, and
// each request for one was a reconcile error ("unknown namespace for the cache", make chaos with
// a second installation).
func TestEventsOfOtherInstallationsNamespaces(t *testing.T) {
	mine := builders.Group("a").Named("mine").Obj()
	mine.Spec.ClusterLocks = []string{"db"}
	r := newTestReconciler(newFakeClient(t, interceptor.Funcs{}, mine), nil).OaatGroupReconciler
	r.Namespaces = []string{testNamespace}
	lock := builders.ClusterLock("db", 2)
	lock.Status.Holders = []v1alpha1.LockHolder{
		{Namespace: "elsewhere", Group: "theirs", GroupUID: "theirs-uid", Item: "a", Pod: "theirs-pod", Since: metav1.NewTime(builders.T0)},
		{Namespace: testNamespace, Group: "mine", GroupUID: "mine-uid", Item: "a", Pod: "mine-pod", Since: metav1.NewTime(builders.T0)},
	}
	q := priorityqueue.New[reconcile.Request]("test-other-installations")
	defer q.ShutDown()
	h := lockHandler{prioritized{r: r, toGroups: r.groupsOfLock, floor: duepriority.Unknown}}
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: lock, ObjectNew: lock}, q)
	h.Create(context.Background(), event.CreateEvent{Object: lock}, q)
	if n := q.Len(); n != 1 {
		t.Fatalf("queued %d requests, want 1, the group of the watched namespace", n)
	}
	if req, _, _ := q.GetWithPriority(); req.Namespace != testNamespace || req.Name != "mine" {
		t.Fatalf("queued %v, want %s/mine", req, testNamespace)
	}
	other := namespaceMetadata()
	other.Name = "elsewhere"
	if got := r.groupsOfNamespace(context.Background(), other); got != nil {
		t.Fatalf("a change of namespace elsewhere concerns %v, want none", got)
	}
}

// Issue 40: a group being deleted keeps its slot while its pod is live (the lock reconciler looks
// again soon), and loses it once the pod has ended; meanwhile another group naming the lock
// waits, and then gets the slot.
func TestDeletingGroupKeepsItsSlotWhileItsPodIsLive(t *testing.T) {
	server, r := sharingDB(t, interceptor.Funcs{})
	pod := startRun(t, r, server, "g")
	deleteHeldBack(t, server, "g")
	res, err := reconcileLock(server, r.clock, "db")
	if err != nil || res.RequeueAfter != orphanPodRetry {
		t.Fatalf("db's pass while g's pod runs: (%v, %v), want a look again after %s", res, err, orphanPodRetry)
	}
	if _, err := r.reconcile(t, "h"); err != nil {
		t.Fatal(err)
	}
	if _, err := reconcileLock(server, r.clock, "db"); err != nil {
		t.Fatal(err)
	}
	if held := holderPods(getLock(t, server, "db")); len(held) != 1 || held[0] != pod || getGroup(t, server, "h").Status.CurrentRun != nil {
		t.Fatalf("while g's pod runs: db lists %v, h runs %v; want db to list %s and h to wait", held, getGroup(t, server, "h").Status.CurrentRun, pod)
	}
	finishPod(t, server, pod, 0, builders.T0.Add(30*time.Second))
	if _, err := reconcileLock(server, r.clock, "db"); err != nil {
		t.Fatal(err)
	}
	w := getGroup(t, server, "h").Status.LockWait
	if held := holderPods(getLock(t, server, "db")); w == nil || !slices.Equal(held, []string{w.Pod}) {
		t.Fatalf("g's pod ended: db lists %v, want h's request %+v alone", held, w)
	}
	if _, err := r.reconcile(t, "h"); err != nil {
		t.Fatal(err)
	}
	if getGroup(t, server, "h").Status.CurrentRun == nil {
		t.Fatal("h did not start once db listed its request")
	}
}
