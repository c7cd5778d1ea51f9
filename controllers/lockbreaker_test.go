package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The lock's reconciler alone writes the breaker a lock carries, from the breakers of the groups
// naming it: it opens when a group's opens (event BreakerOpened on the lock), shares the later
// probe schedule while both are open (no event), and closes when a group's closed since it opened
// (event BreakerClosed on the lock). A review that decides again from the same statuses writes
// nothing and reports nothing.
func TestLockReviewLeadsTheBreaker(t *testing.T) {
	lock := builders.Lock("nas", 2)
	lock.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	opened := &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen, FailedItems: []string{"a", "b", "c"}, OpenedAt: builders.At(-30 * time.Second),
		NextProbeAt: builders.At(30 * time.Second), LastFailureReason: "Error"}
	g := builders.Group("a").Named("g").Locks("nas").Obj()
	g.Status.CircuitBreaker = opened.DeepCopy()
	calm := builders.Group("a").Named("h").Locks("nas").Obj()
	calm.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed}
	writes := 0
	c := newFakeClient(t, interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		if _, ok := obj.(*v1alpha1.OaatLock); ok {
			writes++
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}, lock, g, calm)
	clock := clocktesting.NewFakeClock(builders.T0)
	lr, rec := newLockReconciler(c, clock, false)

	reviewLock(t, lr, "nas")
	want := &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/g", OpenedAt: builders.At(-30 * time.Second),
		NextProbeAt: builders.At(30 * time.Second), LastFailureReason: "Error"}
	if diff := cmp.Diff(want, getLock(t, c, "nas").Status.CircuitBreaker, builders.EquateTimes); diff != "" {
		t.Fatalf("the lock's breaker once g's opened (-want +got):\n%s", diff)
	}
	if got := rec.take(); len(got) != 1 || !slices.Contains(got, "nas Warning BreakerOpened The circuit breaker of group ns/g opened (3 items failed in a row, the last with Error): every group naming the lock holds; one probe at a time runs for all of them, the first at 2026-11-21T12:00:30Z") {
		t.Fatalf("events %q, want BreakerOpened on the lock", got)
	}
	reviewLock(t, lr, "nas")
	if got := rec.take(); len(got) != 0 || writes != 1 {
		t.Fatalf("the same statuses again: events %q, %d writes; want none, 1 write", got, writes)
	}

	// g's probe failed: its next probe is later and its failed probes more; the lock takes them.
	setStatus(t, c, "g", func(st *v1alpha1.OaatGroupStatus) {
		st.CircuitBreaker.NextProbeAt, st.CircuitBreaker.FailedProbes, st.CircuitBreaker.LastFailureReason = builders.At(2*time.Minute), 1, "OOMKilled"
	})
	reviewLock(t, lr, "nas")
	want.NextProbeAt, want.FailedProbes, want.LastFailureReason = builders.At(2*time.Minute), 1, "OOMKilled"
	if diff := cmp.Diff(want, getLock(t, c, "nas").Status.CircuitBreaker, builders.EquateTimes); diff != "" {
		t.Fatalf("the lock's breaker after g's failed probe (-want +got):\n%s", diff)
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("events %q after a failed probe, want none", got)
	}

	// g's probe succeeded: its breaker closed since the lock's opened; the lock closes.
	clock.Step(3 * time.Minute)
	setStatus(t, c, "g", func(st *v1alpha1.OaatGroupStatus) {
		st.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed, ClosedAt: builders.At(3 * time.Minute)}
	})
	reviewLock(t, lr, "nas")
	closed := &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerClosed, ClosedAt: builders.At(3 * time.Minute), ClosedBy: "ns/g"}
	if diff := cmp.Diff(closed, getLock(t, c, "nas").Status.CircuitBreaker, builders.EquateTimes); diff != "" {
		t.Fatalf("the lock's breaker once g's closed (-want +got):\n%s", diff)
	}
	if got := rec.take(); len(got) != 1 || got[0] != "nas Normal BreakerClosed The circuit breaker, open since 2026-11-21T11:59:30Z, closes (failed probes: 1): the breaker of group ns/g closed; every group naming the lock goes on" {
		t.Fatalf("events %q, want BreakerClosed on the lock", got)
	}
	reviewLock(t, lr, "nas")
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("the same statuses again: events %q, want none", got)
	}
}

// While the breaker a lock carries is open, the lock grants one slot at a time, whatever its
// capacity: the probes of all the groups naming it run one at a time.
func TestLockWithAnOpenBreakerGrantsOneSlot(t *testing.T) {
	lock := builders.Lock("nas", 3)
	lock.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	lock.Status.CircuitBreaker = &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/other", OpenedAt: builders.At(-time.Minute)}
	c := newFakeClient(t, interceptor.Funcs{}, lock, requesting("g", -2*time.Second), requesting("h", -time.Second))
	lr, _ := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), false)
	reviewLock(t, lr, "nas")
	if got := holderPods(getLock(t, c, "nas")); !slices.Equal(got, []string{"g-a-1"}) {
		t.Errorf("holders %v with the breaker open, want g's request alone", got)
	}
}

// A lock that no longer carries the breaker loses its status.circuitBreaker at its reconciler's
// next pass; one that carries it keeps it.
func TestLockForgetsTheBreakerItNoLongerCarries(t *testing.T) {
	for _, mode := range []v1alpha1.LockBreakerMode{v1alpha1.LockBreakerShared, v1alpha1.LockBreakerNone, ""} {
		carries := mode == v1alpha1.LockBreakerShared
		lock := builders.Lock("nas", 1)
		lock.Spec.CircuitBreaker = mode
		lock.Status.CircuitBreaker = &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/g"}
		c := newFakeClient(t, interceptor.Funcs{}, lock)
		r, _ := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), false)
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(lock)}); err != nil {
			t.Fatalf("circuitBreaker %q: %v", mode, err)
		}
		if kept := getLock(t, c, "nas").Status.CircuitBreaker != nil; kept != carries {
			t.Errorf("circuitBreaker %q: breaker kept %v, want %v", mode, kept, carries)
		}
	}
}
