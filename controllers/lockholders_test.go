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

// Defects 1 and 2: a group whose status the API server refuses gives back the slot it took for
// the run (another group naming the lock then starts), and, while the refusal lasts, does not
// take it again at every wake-up: no lock write until its retry wait is over.
func TestRefusedStatusGivesBackTheSlot(t *testing.T) {
	lockWrites := map[string]int{}
	server, r := sharingDB(t, refuseStatusOf("g", lockWrites))

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("g's pass: %v", err)
	}
	if holders := getLock(t, server, "db").Status.Holders; len(holders) != 0 {
		t.Fatalf("db keeps holders %+v after g's status was refused", holders)
	}
	// The lock's writes wake g (it held a slot): passes within the retry wait take no slot.
	writes := lockWrites["db"]
	for range 3 {
		r.clock.Step(time.Second)
		if _, err := r.reconcile(t, "g"); err != nil {
			t.Fatalf("g's pass: %v", err)
		}
	}
	if n := lockWrites["db"] - writes; n != 0 {
		t.Errorf("%d writes of db in 3 s of refusals: each pass took the slot again", n)
	}
	if _, err := r.reconcile(t, "h"); err != nil {
		t.Fatalf("h's pass: %v", err)
	}
	if cr := getGroup(t, server, "h").Status.CurrentRun; cr == nil {
		t.Errorf("h did not start: db's slot %+v", getLock(t, server, "db").Status.Holders)
	}
}

// startRun reconciles the group once and returns its current run's pod, which must exist.
func startRun(t *testing.T, r testReconciler, c client.Reader, group string) string {
	t.Helper()
	if _, err := r.reconcile(t, group); err != nil {
		t.Fatalf("%s's pass: %v", group, err)
	}
	cr := getGroup(t, c, group).Status.CurrentRun
	if cr == nil {
		t.Fatalf("%s did not start a run", group)
	}
	return cr.PodName
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

// reconcileLock runs one pass of the reconciler of OaatLocks over the lock of that name.
func reconcileLock(c client.Client, at clock.PassiveClock, name string) (ctrl.Result, error) {
	lr := &OaatLockReconciler{Client: c, APIReader: c, Clock: at}
	return lr.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNamespace, Name: name}})
}

// holderPods are the pods a lock lists as holders.
func holderPods(lock v1alpha1.Lock) []string {
	var pods []string
	for _, h := range lock.LockHolders() {
		pods = append(pods, h.Pod)
	}
	return pods
}

// Defect 3: a lock deleted and created again while a run holds it (kubectl replace --force, a
// GitOps re-create, a restore) comes back without holders; the live run still takes its slot:
// another group naming the lock does not start, and the run's next pass lists it again.
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
	if _, err := r.reconcile(t, "h"); err != nil {
		t.Fatalf("h's pass: %v", err)
	}
	if cr := getGroup(t, server, "h").Status.CurrentRun; cr != nil {
		t.Errorf("h started %s beside g's live %s under capacity 1", cr.PodName, pod)
	}
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("g's pass: %v", err)
	}
	if got := holderPods(getLock(t, server, "db")); len(got) != 1 || got[0] != pod {
		t.Errorf("db lists %v after g's pass, want g's live run %s", got, pod)
	}
}

// Defect 4: a lock named by an edit while runs go on counts them: it lists each run on its
// group's next pass, over its capacity if need be (reported once, by an event), and no group
// naming it starts until enough of them have ended.
func TestLockAddedToRunningGroups(t *testing.T) {
	g, h, k := builders.Group("a").Named("g").Obj(), builders.Group("b").Named("h").Obj(), builders.Group("c").Named("k").Obj()
	k.Spec.Locks = []string{"db"}
	server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), g, h, k, builders.Lock("db", 1))
	r := newTestReconciler(server, server)
	gPod, hPod := startRun(t, r, server, "g"), startRun(t, r, server, "h")
	drainEvents(r.recorder)

	ctx := context.Background()
	for _, name := range []string{"g", "h"} {
		group := getGroup(t, server, name)
		group.Spec.Locks = []string{"db"}
		if err := server.Update(ctx, group); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.reconcile(t, "k"); err != nil {
		t.Fatalf("k's pass: %v", err)
	}
	if cr := getGroup(t, server, "k").Status.CurrentRun; cr != nil {
		t.Errorf("k started %s beside %s and %s, which now name db of capacity 1", cr.PodName, gPod, hPod)
	}
	for _, name := range []string{"g", "h"} {
		if _, err := r.reconcile(t, name); err != nil {
			t.Fatalf("%s's pass: %v", name, err)
		}
	}
	if got := holderPods(getLock(t, server, "db")); len(got) != 2 {
		t.Errorf("db lists %v, want both live runs %s and %s", got, gPod, hPod)
	}
	var over []string
	for _, e := range drainEvents(r.recorder) {
		if strings.Contains(e, string(v1alpha1.ReasonLockOverCapacity)) {
			over = append(over, e)
		}
	}
	if len(over) != 1 {
		t.Errorf("LockOverCapacity events %q, want one", over)
	}
}

// Defect 5: a waiting group that is being deleted (another tool's finalizer keeps it) loses its
// claim: the free slot goes to the next waiter.
func TestDeletingWaiterLosesItsClaim(t *testing.T) {
	g, h := builders.Group("a").Named("g").Obj(), builders.Group("b").Named("h").Obj()
	g.Spec.Locks, h.Spec.Locks = []string{"db"}, []string{"db"}
	earlier := metav1.NewTime(builders.T0.Add(-time.Hour))
	g.Status.LockWait = &v1alpha1.LockWait{Since: earlier, Locks: []string{"db"}}
	g.Finalizers = []string{"example.com/keep"}
	server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), g, h, builders.Lock("db", 1))
	if err := server.Delete(context.Background(), getGroup(t, server, "g")); err != nil {
		t.Fatal(err)
	}
	r := newTestReconciler(server, server)
	startRun(t, r, server, "h")
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
			if got.Status.CurrentRun != nil {
				t.Errorf("started %s in a namespace db's selector excludes", got.Status.CurrentRun.PodName)
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
// other and every group naming the lock. It writes its own claim instead, beside the other
// installations' claims. One that watches all namespaces counts the waiters and claims nothing.
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
			r := &OaatLockReconciler{Client: c, APIReader: c, Cluster: true, Installation: tc.installation, Clock: newTestReconciler(c, c).clock}
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

// A lock's change wakes only the groups that can act on it: its holders, the groups naming it
// whose current run it does not list, the groups that lost a race for it, and as many waiters as
// it has free slots, the earliest claims first; its creation or deletion wakes every group naming
// it.
func TestLockChangeWakesTheFewThatCanAct(t *testing.T) {
	group := func(name string, mutate func(*v1alpha1.OaatGroup)) *v1alpha1.OaatGroup {
		g := builders.Group("a").Named(name).Obj()
		g.Spec.Locks = []string{"db"}
		mutate(g)
		return g
	}
	running := func(g *v1alpha1.OaatGroup) {
		g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "a", PodName: g.Name + "-pod", StartedAt: metav1.NewTime(builders.T0)}
	}
	waiting := func(ago time.Duration) func(*v1alpha1.OaatGroup) {
		return func(g *v1alpha1.OaatGroup) {
			g.Status.LockWait = &v1alpha1.LockWait{Since: metav1.NewTime(builders.T0.Add(-ago)), Locks: []string{"db"}}
		}
	}
	deleting := group("w0", waiting(3*time.Hour))
	deleting.Finalizers = []string{"example.com/keep"}
	objs := []client.Object{
		group("g", running), group("h", running), deleting,
		group("w2", waiting(time.Hour)), group("w1", waiting(2*time.Hour)), group("idle", func(*v1alpha1.OaatGroup) {}),
	}
	c := newFakeClient(t, interceptor.Funcs{}, objs...)
	if err := c.Delete(context.Background(), deleting); err != nil {
		t.Fatal(err)
	}
	r := &OaatGroupReconciler{Client: c}
	names := func(requests []ctrl.Request) []string {
		var out []string
		for _, req := range requests {
			out = append(out, req.Name)
		}
		return out
	}
	for _, tc := range []struct {
		capacity int32
		want     []string
	}{
		{capacity: 1, want: []string{"g", "h"}},             // g holds, h runs unlisted: no slot free
		{capacity: 3, want: []string{"g", "h", "w1"}},       // one slot free: the earliest live claim
		{capacity: 9, want: []string{"g", "h", "w1", "w2"}}, // every waiter but the one being deleted
	} {
		lock := builders.Lock("db", tc.capacity)
		lock.Status.Holders = []v1alpha1.LockHolder{builders.Holder("g", "g-pod", builders.At(0))}
		if got := names(r.groupsToWake(context.Background(), lock)); !slices.Equal(got, tc.want) {
			t.Errorf("capacity %d: a change wakes %v, want %v", tc.capacity, got, tc.want)
		}
		if got := names(r.groupsOfLock(context.Background(), lock)); len(got) != 6 {
			t.Errorf("capacity %d: a creation or deletion wakes %v, want all six groups", tc.capacity, got)
		}
	}

	// A group that lost the race for a slot (its write of the lock met a conflict) is woken by the
	// lock's next change, once.
	lock := builders.Lock("db", 1)
	r.races.lostOn(client.ObjectKeyFromObject(lock), client.ObjectKey{Namespace: testNamespace, Name: "idle"})
	if got := names(r.groupsToWake(context.Background(), lock)); !slices.Contains(got, "idle") {
		t.Errorf("after a lost race a change wakes %v, want idle among them", got)
	}
	if got := names(r.groupsToWake(context.Background(), lock)); slices.Contains(got, "idle") {
		t.Errorf("the next change wakes %v, want idle no more", got)
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
// again soon), and gives it back once the pod has ended; meanwhile another group naming the lock
// waits.
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
	if held := holderPods(getLock(t, server, "db")); len(held) != 1 || held[0] != pod || getGroup(t, server, "h").Status.CurrentRun != nil {
		t.Fatalf("while g's pod runs: db lists %v, h runs %v; want db to list %s and h to wait", held, getGroup(t, server, "h").Status.CurrentRun, pod)
	}
	finishPod(t, server, pod, 0, builders.T0.Add(30*time.Second))
	if _, err := reconcileLock(server, r.clock, "db"); err != nil {
		t.Fatal(err)
	}
	if held := holderPods(getLock(t, server, "db")); len(held) != 0 {
		t.Fatalf("g's pod ended: db still lists %v", held)
	}
	if _, err := r.reconcile(t, "h"); err != nil {
		t.Fatal(err)
	}
	if getGroup(t, server, "h").Status.CurrentRun == nil {
		t.Fatal("h did not start once g's slot was given back")
	}
}
