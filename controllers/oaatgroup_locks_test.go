package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func getLock(t *testing.T, c client.Reader, name string) *v1alpha1.OaatLock {
	t.Helper()
	l := &v1alpha1.OaatLock{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: name}, l); err != nil {
		t.Fatalf("reading lock %s: %v", name, err)
	}
	return l
}

// conflictOn makes every status update of the objects that match refuse with a conflict.
func conflictOn(match func(client.Object) bool) interceptor.Funcs {
	return interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		if match(obj) {
			return apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupVersion.Group}, obj.GetName(), nil)
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}
}

// A run starts only once every lock it names lists its request: while one lock's write meets a
// conflict (its reconciler grants nothing and retries), the group waits for it, holding the grant
// of the other, and neither its run nor its pod is written.
func TestLocksAllOrNone(t *testing.T) {
	group := builders.Group("a").Named("g").Obj()
	group.Spec.Locks = []string{"db", "nas"}
	server := newFakeClient(t, conflictOn(func(obj client.Object) bool {
		return obj.GetName() == "nas"
	}), builders.Type().Obj(), group, builders.Lock("db", 1), builders.Lock("nas", 1))
	r := newTestReconciler(server, server)
	lr, _ := newLockReconciler(server, r.clock, false)

	for range 2 {
		if _, err := r.reconcile(t, "g"); err != nil {
			t.Fatalf("pass: %v", err)
		}
		reviewLock(t, lr, "db")
		if res := reviewLock(t, lr, "nas"); res.RequeueAfter != conflictRetry {
			t.Fatalf("nas's pass met a conflict: %+v, want a retry after %v", res, conflictRetry)
		}
	}
	g := getGroup(t, server, "g")
	if g.Status.CurrentRun != nil {
		t.Errorf("the intent %+v was written without nas", g.Status.CurrentRun)
	}
	if w := g.Status.LockWait; w == nil || !slices.Equal(w.Locks, []string{"nas"}) || !slices.Equal(holderPods(getLock(t, server, "db")), []string{w.Pod}) {
		t.Errorf("lockWait %+v, db lists %v; want a wait for nas alone, db listing the request", w, holderPods(getLock(t, server, "db")))
	}
	if pods := listPods(t, server); len(pods) != 0 {
		t.Errorf("pods %v created without the locks", podNames(pods))
	}
}

// The start's status write losing a race writes no run and no pod; the lock keeps the grant while
// the group's status still names the request, and the group's next pass starts the run in the pod
// the lock lists.
func TestGrantKeptWhenTheStartIsNotWritten(t *testing.T) {
	group := builders.Group("a").Named("g").Obj()
	group.Spec.Locks = []string{"nas"}
	refuse := false
	server := newFakeClient(t, conflictOn(func(obj client.Object) bool {
		g, isGroup := obj.(*v1alpha1.OaatGroup)
		return refuse && isGroup && g.Status.CurrentRun != nil
	}), builders.Type().Obj(), group, builders.Lock("nas", 1))
	r := newTestReconciler(server, server)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass: %v", err)
	}
	if _, err := reconcileLock(server, r.clock, "nas"); err != nil {
		t.Fatal(err)
	}
	granted := holderPods(getLock(t, server, "nas"))
	refuse = true
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("the start's pass: %v", err)
	}
	if pods := listPods(t, server); len(pods) != 0 || getGroup(t, server, "g").Status.CurrentRun != nil {
		t.Fatalf("pods %v, currentRun %+v after the start's write met a conflict", podNames(pods), getGroup(t, server, "g").Status.CurrentRun)
	}
	if _, err := reconcileLock(server, r.clock, "nas"); err != nil {
		t.Fatal(err)
	}
	if got := holderPods(getLock(t, server, "nas")); len(granted) != 1 || !slices.Equal(got, granted) {
		t.Fatalf("nas lists %v, want the grant %v kept for the request", got, granted)
	}
	refuse = false
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("the next pass: %v", err)
	}
	if pods := listPods(t, server); len(pods) != 1 || pods[0].Name != granted[0] {
		t.Errorf("pods %v, want the granted pod %s", podNames(pods), granted[0])
	}
}

// A full run through the group's and the lock's reconcilers: the group asks, the lock grants the
// request (with the group's UID, the item and the pod, since the grant), the run starts in that
// pod, keeps its slot while its pod runs, and loses it once its outcome is recorded. Only the
// lock's reconciler writes the lock: the grant (with the waiting count), the waiting count back
// to zero once the run started, and the drop.
func TestLockGrantedAndDroppedOncePerRun(t *testing.T) {
	group := builders.Group("a").Named("g").Obj()
	group.Spec.Locks = []string{"nas"}
	lockWrites := 0
	server := newFakeClient(t, interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		if _, ok := obj.(*v1alpha1.OaatLock); ok {
			lockWrites++
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}, builders.Type().Obj(), group, builders.Lock("nas", 1))
	r := newTestReconciler(server, server)
	lr, _ := newLockReconciler(server, r.clock, false)
	pass := func(step string) {
		t.Helper()
		if _, err := r.reconcile(t, "g"); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		reviewLock(t, lr, "nas")
	}

	pass("the request")
	w := getGroup(t, server, "g").Status.LockWait
	if w == nil || w.Item != "a" || w.Pod == "" || !slices.Equal(w.Locks, []string{"nas"}) {
		t.Fatalf("lockWait %+v, want a request for item a", w)
	}
	want := []v1alpha1.LockHolder{{Group: "g", GroupUID: "g-uid", Item: "a", Pod: w.Pod, Since: *builders.At(0)}}
	if diff := cmp.Diff(want, getLock(t, server, "nas").Status.Holders, builders.EquateTimes); diff != "" {
		t.Fatalf("holders (-want +got):\n%s", diff)
	}
	pass("the start")
	pods := listPods(t, server)
	if len(pods) != 1 || pods[0].Name != w.Pod {
		t.Fatalf("pods %v: want the granted pod %s", podNames(pods), w.Pod)
	}
	if diff := cmp.Diff(want, getLock(t, server, "nas").Status.Holders, builders.EquateTimes); diff != "" {
		t.Fatalf("holders while the run goes on (-want +got):\n%s", diff)
	}
	pass("while running")
	finishPod(t, server, pods[0].Name, 0, builders.T0)
	r.clock.Step(1)
	pass("after the run")
	if g := getGroup(t, server, "g"); g.Status.CurrentRun != nil || g.Status.LockWait != nil {
		t.Fatalf("currentRun %+v, lockWait %+v: the run was not recorded, or the group asks again", g.Status.CurrentRun, g.Status.LockWait)
	}
	if l := getLock(t, server, "nas"); len(l.Status.Holders) != 0 || l.Status.HolderCount != 0 || l.Status.WaitingGroups != 0 {
		t.Errorf("holders %+v (count %d), waiting %d after the run's outcome was recorded", l.Status.Holders, l.Status.HolderCount, l.Status.WaitingGroups)
	}
	if lockWrites != 3 {
		t.Errorf("%d lock writes for one run, want 3 (the grant, the waiting count back to 0, the drop)", lockWrites)
	}
}

// A group writes no lock, whether it names one or not: its request is its own status.lockWait.
func TestGroupWritesNoLock(t *testing.T) {
	for _, names := range [][]string{nil, {"nas"}} {
		lockWrites := 0
		g := builders.Group("a").Named("g").Locks(names...).Obj()
		server := newFakeClient(t, interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if _, ok := obj.(*v1alpha1.OaatLock); ok {
				lockWrites++
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}}, builders.Type().Obj(), g, builders.Lock("nas", 1, builders.Holder("other", "other-x-1", builders.At(-time.Minute))))
		r := newTestReconciler(server, server)
		for range 3 {
			if _, err := r.reconcile(t, "g"); err != nil {
				t.Fatal(err)
			}
			r.clock.Step(time.Second)
		}
		if pods := listPods(t, server); len(names) == 0 && len(pods) != 1 {
			t.Errorf("a group naming no lock: pods %v, want its run's", podNames(pods))
		}
		if w := getGroup(t, server, "g").Status.LockWait; (w != nil) != (len(names) > 0) {
			t.Errorf("locks %v: lockWait %+v", names, w)
		}
		if lockWrites != 0 {
			t.Errorf("locks %v: %d lock writes by the group's reconciler", names, lockWrites)
		}
	}
}

// TestPromotedNow proves which groups a lock's change wakes for a promotion: those whose request
// the lock lists as passed over PassLimit times and did not before (of the lock's namespace for an
// OaatLock, of the entry's for a ClusterOaatLock), and no other.
func TestPromotedNow(t *testing.T) {
	entry := func(namespace, group string, count int32) v1alpha1.PassedOver {
		return v1alpha1.PassedOver{Namespace: namespace, Group: group, Since: *builders.At(-time.Minute), Count: count}
	}
	before, after := builders.Lock("nas", 1), builders.Lock("nas", 1)
	before.Status.PassedOver = []v1alpha1.PassedOver{entry("", "a", v1alpha1.PassLimit-1), entry("", "b", v1alpha1.PassLimit)}
	after.Status.PassedOver = []v1alpha1.PassedOver{entry("", "a", v1alpha1.PassLimit), entry("", "b", v1alpha1.PassLimit), entry("", "c", 1)}
	if got, want := promotedNow(before, after), []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "a"}}}; !slices.Equal(got, want) {
		t.Errorf("OaatLock: woke %v, want %v", got, want)
	}
	cb, ca := builders.ClusterLock("db", 1), builders.ClusterLock("db", 1)
	cb.Status.PassedOver = []v1alpha1.PassedOver{entry("team-a", "a", v1alpha1.PassLimit)}
	ca.Status.PassedOver = []v1alpha1.PassedOver{entry("team-a", "a", v1alpha1.PassLimit), entry("team-b", "a", v1alpha1.PassLimit)}
	if got, want := promotedNow(cb, ca), []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "team-b", Name: "a"}}}; !slices.Equal(got, want) {
		t.Errorf("ClusterOaatLock: woke %v, want %v", got, want)
	}
}
