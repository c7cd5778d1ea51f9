package controllers

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The breaker a lock carries is written as the plan says, then its event is sent on the lock; a
// lock whose breaker another group changed since the decision read it is left alone, with no
// event, and the pass ends with a retry.
func TestWriteLockBreakers(t *testing.T) {
	carrying := builders.Lock("nas", 2)
	carrying.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	opened := &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/g", LastFailureReason: "Error"}
	update := planner.LockBreakerUpdate{Lock: carrying.DeepCopy(), Breaker: opened,
		Event: &planner.Event{Type: "Warning", Reason: v1alpha1.ReasonBreakerOpened, Message: "opened"}}

	t.Run("written, then its event", func(t *testing.T) {
		server := newFakeClient(t, interceptor.Funcs{}, carrying.DeepCopy())
		r := newTestReconciler(server, server)
		update.Lock = getLock(t, server, "nas")
		result, err := r.writeLockBreakers(context.Background(), &applying{plan: planner.Plan{LockBreakers: []planner.LockBreakerUpdate{update}}})
		if err != nil || result != nil {
			t.Fatalf("result %v, error %v; want to go on", result, err)
		}
		if diff := cmp.Diff(opened, getLock(t, server, "nas").Status.CircuitBreaker); diff != "" {
			t.Errorf("lock breaker (-want +got):\n%s", diff)
		}
		if got := drainEvents(r.recorder); !cmp.Equal(got, []string{"Warning BreakerOpened opened"}) {
			t.Errorf("events %v, want the opening's on the lock", got)
		}
	})

	t.Run("changed since read: not written", func(t *testing.T) {
		changed := carrying.DeepCopy()
		changed.Status.CircuitBreaker = &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/other"}
		server := newFakeClient(t, interceptor.Funcs{}, changed)
		r := newTestReconciler(server, server)
		update.Lock = carrying.DeepCopy() // as the decision read it, before the other group's write
		result, err := r.writeLockBreakers(context.Background(), &applying{plan: planner.Plan{LockBreakers: []planner.LockBreakerUpdate{update}}})
		if err != nil || result == nil || result.RequeueAfter != conflictRetry {
			t.Fatalf("result %v, error %v; want a retry after %v", result, err, conflictRetry)
		}
		if got := getLock(t, server, "nas").Status.CircuitBreaker.OpenedBy; got != "ns/other" {
			t.Errorf("the other group's breaker was overwritten: openedBy %q", got)
		}
		if got := drainEvents(r.recorder); len(got) != 0 {
			t.Errorf("events %v, want none", got)
		}
	})
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
		r := &OaatLockReconciler{Client: c, APIReader: c, Clock: clocktesting.NewFakeClock(builders.T0)}
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(lock)}); err != nil {
			t.Fatalf("circuitBreaker %q: %v", mode, err)
		}
		if kept := getLock(t, c, "nas").Status.CircuitBreaker != nil; kept != carries {
			t.Errorf("circuitBreaker %q: breaker kept %v, want %v", mode, kept, carries)
		}
	}
}
