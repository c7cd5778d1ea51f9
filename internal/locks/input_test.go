package locks

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// TestAddWaiter proves that AddWaiter records, of the groups given, those that wait (Waits) with
// their place, request pod, lock keys (spec.locks, then the ClusterOaatLocks) and yields, and
// skips the others.
func TestAddWaiter(t *testing.T) {
	waiting := builders.Group().Named("w").Namespace("team-a").Locks("nas").ClusterLocks("db").Obj()
	waiting.Status.LockWait = wait(-time.Minute, "w-1", "nas")
	deleting := builders.Group().Named("d").Locks("nas").Obj()
	deleting.Status.LockWait = wait(-time.Minute, "d-1")
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	idle := builders.Group().Named("i").Locks("nas").Obj()
	old := builders.Group().Named("o").Locks("nas").WaitingForLocks(at(0)).Obj() // a request of 0.2.0

	var in Input
	for _, g := range []*v1alpha1.OaatGroup{waiting, deleting, idle, old} {
		in.AddWaiter(g)
	}
	want := []Waiter{
		{Place: Place{Since: t0.Add(-time.Minute), Namespace: "team-a", Group: "w"}, Pod: "w-1",
			Locks: []string{"nas", "ClusterOaatLock/db"}, Yielded: []string{"nas"}},
		{Place: Place{Since: t0, Namespace: "ns", Group: "o"}, Locks: []string{"nas"}},
	}
	if d := diff(want, in.Waiters); d != "" {
		t.Fatalf("Waiters (-want +got):\n%s", d)
	}
}

// TestWaiterWants proves that a waiter wants a lock it names, for its request's pod, unless it
// yields the lock, has no pod (0.2.0) or the lock already lists its pod.
func TestWaiterWants(t *testing.T) {
	w := Waiter{Place: Place{Since: t0, Namespace: "ns", Group: "b"}, Pod: "b-1", Locks: []string{"l1", "l2"}}
	yielding, noPod, other := w, w, w
	yielding.Yielded = []string{"l1"}
	noPod.Pod = ""
	other.Locks = []string{"l2"}
	tests := []struct {
		name   string
		waiter Waiter
		lock   v1alpha1.Lock
		want   bool
	}{
		{name: "names it, not listed", waiter: w, lock: lock("l1", 1, holder("a", "a-1")), want: true},
		{name: "listed", waiter: w, lock: lock("l1", 2, holder("a", "a-1"), holder("b", "b-1"))},
		{name: "listed for another pod", waiter: w, lock: lock("l1", 2, holder("b", "b-0")), want: true},
		{name: "yields it", waiter: yielding, lock: lock("l1", 1, holder("a", "a-1"))},
		{name: "a request of 0.2.0", waiter: noPod, lock: lock("l1", 1, holder("a", "a-1"))},
		{name: "does not name it", waiter: other, lock: lock("l1", 1, holder("a", "a-1"))},
	}
	for _, tt := range tests {
		if got := tt.waiter.wants(tt.lock); got != tt.want {
			t.Errorf("%s: wants = %v, want %v", tt.name, got, tt.want)
		}
	}
}
