package controllers

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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

// A run takes every lock or none: when the second lock cannot be written, the first gives its
// slot back, and neither the intent nor the pod is written.
func TestLocksAllOrNone(t *testing.T) {
	group := builders.Group("a").Named("g").Obj()
	group.Spec.Locks = []string{"db", "nas"}
	server := newFakeClient(t, conflictOn(func(obj client.Object) bool {
		return obj.GetName() == "nas"
	}), builders.Type().Obj(), group, builders.Lock("db", 1), builders.Lock("nas", 1))
	r := newTestReconciler(server, server)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass: %v", err)
	}
	if h := getLock(t, server, "db").Status.Holders; len(h) != 0 {
		t.Errorf("db keeps holders %+v after nas could not be taken", h)
	}
	if g := getGroup(t, server, "g"); g.Status.CurrentRun != nil {
		t.Errorf("the intent %+v was written without the locks", g.Status.CurrentRun)
	}
	if pods := listPods(t, server); len(pods) != 0 {
		t.Errorf("pods %v created without the locks", podNames(pods))
	}
}

// The intent's write losing a race gives the slots taken for it back: no slot names a run that
// the group's status does not.
func TestLocksGivenBackWhenTheIntentIsNotWritten(t *testing.T) {
	group := builders.Group("a").Named("g").Obj()
	group.Spec.Locks = []string{"nas"}
	server := newFakeClient(t, conflictOn(func(obj client.Object) bool {
		_, isGroup := obj.(*v1alpha1.OaatGroup)
		return isGroup
	}), builders.Type().Obj(), group, builders.Lock("nas", 1))
	r := newTestReconciler(server, server)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass: %v", err)
	}
	if h := getLock(t, server, "nas").Status.Holders; len(h) != 0 {
		t.Errorf("nas keeps holders %+v for a run whose intent was not written", h)
	}
	if pods := listPods(t, server); len(pods) != 0 {
		t.Errorf("pods %v created without an intent", podNames(pods))
	}
}

// A full run through the reconciler: the slot is taken with the intent, kept while the pod runs,
// and given back once the outcome is recorded; the lock is written twice.
func TestLockTakenAndGivenBackOncePerRun(t *testing.T) {
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

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	pods := listPods(t, server)
	holders := getLock(t, server, "nas").Status.Holders
	if len(pods) != 1 {
		t.Fatalf("pods %v: want the run's pod", podNames(pods))
	}
	want := []v1alpha1.LockHolder{{Group: "g", GroupUID: "g-uid", Item: "a", Pod: pods[0].Name, Since: *builders.At(0)}}
	if diff := cmp.Diff(want, holders, builders.EquateTimes); diff != "" {
		t.Fatalf("holders (-want +got):\n%s", diff)
	}
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass while running: %v", err)
	}
	finishPod(t, server, pods[0].Name, 0, builders.T0)
	r.clock.Step(1)
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass after the run: %v", err)
	}
	if g := getGroup(t, server, "g"); g.Status.CurrentRun != nil {
		t.Fatalf("the run was not recorded: %+v", g.Status.CurrentRun)
	}
	if l := getLock(t, server, "nas"); len(l.Status.Holders) != 0 || l.Status.HolderCount != 0 {
		t.Errorf("holders %+v (count %d) after the run's outcome was recorded", l.Status.Holders, l.Status.HolderCount)
	}
	if lockWrites != 2 {
		t.Errorf("%d lock writes for one run, want 2 (take, give back)", lockWrites)
	}
}

// A group naming no lock writes no lock.
func TestNoLockWritesWithoutLocks(t *testing.T) {
	lockWrites := 0
	server := newFakeClient(t, interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		if _, ok := obj.(*v1alpha1.OaatLock); ok {
			lockWrites++
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}, builders.Type().Obj(), builders.Group("a").Named("g").Obj(), builders.Lock("nas", 1))
	r := newTestReconciler(server, server)
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatal(err)
	}
	finishPod(t, server, listPods(t, server)[0].Name, 0, builders.T0)
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatal(err)
	}
	if lockWrites != 0 {
		t.Errorf("%d lock writes by a group naming no lock", lockWrites)
	}
}
