package controllers

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

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
	clock := clocktesting.NewFakeClock(builders.T0)
	r := &OaatLockReconciler{Client: c, APIReader: c, Clock: clock}
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
		got := &v1alpha1.OaatLock{}
		if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return got.Status.WaitingGroups
	}

	reconcile("first count")
	if writes != 1 || waiting() != 1 {
		t.Fatalf("first change: %d writes, waiting %d; want 1 write, waiting 1", writes, waiting())
	}
	if err := c.Create(context.Background(), waiter("g2")); err != nil {
		t.Fatal(err)
	}
	clock.Step(3 * time.Second)
	if res := reconcile("second waiter, 3 s later"); writes != 1 || res.RequeueAfter != waitingRefresh-3*time.Second {
		t.Fatalf("a count change 3 s after a write: %d writes, requeue after %v; want 1 write, requeue after %v", writes, res.RequeueAfter, waitingRefresh-3*time.Second)
	}
	clock.Step(waitingRefresh - 3*time.Second)
	reconcile("the requeue")
	if writes != 2 || waiting() != 2 {
		t.Fatalf("after waitingRefresh: %d writes, waiting %d; want 2 writes, waiting 2", writes, waiting())
	}
	reconcile("nothing changed")
	if writes != 2 {
		t.Fatalf("no change: %d writes, want 2", writes)
	}

	// Nobody waits any more: written at once, within the rate limit.
	for _, name := range []string{"g1", "g2"} {
		g := &v1alpha1.OaatGroup{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: name}, g); err != nil {
			t.Fatal(err)
		}
		g.Status.LockWait = nil
		if err := c.Status().Update(context.Background(), g); err != nil {
			t.Fatal(err)
		}
	}
	writes = 0
	clock.Step(time.Second)
	reconcile("no waiter")
	if writes != 1 || waiting() != 0 {
		t.Fatalf("the count dropping to zero: %d writes, waiting %d; want 1 write, waiting 0", writes, waiting())
	}

	// A holder whose group is gone (and its pod too) is released at once, within the rate limit.
	gone := &v1alpha1.OaatLock{}
	if err := c.Get(context.Background(), req.NamespacedName, gone); err != nil {
		t.Fatal(err)
	}
	gone.Status.Holders = []v1alpha1.LockHolder{builders.Holder("deleted", "deleted-x-1", builders.At(0))}
	if err := c.Status().Update(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	writes = 0
	clock.Step(time.Second)
	reconcile("a stale holder")
	if writes != 1 {
		t.Fatalf("a holder change within the rate limit: %d writes, want 1", writes)
	}
}
