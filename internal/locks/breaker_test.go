package locks

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// carrying is the OaatLock nas of capacity 3 that carries the breaker, in the state given (none
// when empty), with the holders.
func carrying(state v1alpha1.BreakerState, holders ...v1alpha1.LockHolder) *v1alpha1.OaatLock {
	l := lock("nas", 3, holders...)
	l.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	if state != "" {
		l.Status.CircuitBreaker = &v1alpha1.LockCircuitBreakerStatus{State: state}
	}
	return l
}

// TestBreakerSlots: a lock whose carried breaker is open gives one slot, whatever its capacity, so
// that the groups naming it probe one at a time; closed, absent or not carried, its capacity.
func TestBreakerSlots(t *testing.T) {
	notCarried := carrying(v1alpha1.BreakerOpen)
	notCarried.Spec.CircuitBreaker = v1alpha1.LockBreakerNone
	clusterOpen := clusterLock("shared", 5)
	clusterOpen.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	clusterOpen.Status.CircuitBreaker = &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen}
	for _, tc := range []struct {
		name  string
		lock  v1alpha1.Lock
		open  bool
		slots int
	}{
		{name: "open", lock: carrying(v1alpha1.BreakerOpen), open: true, slots: 1},
		{name: "closed", lock: carrying(v1alpha1.BreakerClosed), slots: 3},
		{name: "never opened", lock: carrying(""), slots: 3},
		{name: "open but no longer carried", lock: notCarried, slots: 3},
		{name: "a ClusterOaatLock, open", lock: clusterOpen, open: true, slots: 1},
	} {
		if open, slots := BreakerOpen(tc.lock), Slots(tc.lock); open != tc.open || slots != tc.slots {
			t.Errorf("%s: BreakerOpen %v, Slots %d; want %v, %d", tc.name, open, slots, tc.open, tc.slots)
		}
	}
}

// TestTakeWithBreakerOpen: while the breaker is open, a second probe finds no slot though the
// lock has capacity 3, and the ToWake of a freed lock wakes the longest waiter only.
func TestTakeWithBreakerOpen(t *testing.T) {
	g := group("a", []string{"nas"}, "", nil)
	mine := Claim{Since: t0, Namespace: "ns", Group: "a"}
	run := holder("a", "a-x-2")
	if _, blocked, _ := Take(&g, input(carrying(v1alpha1.BreakerOpen, holder("b", "b-x-1"))), mine, run, t0); !slices.Equal(blocked, []string{"nas"}) {
		t.Errorf("open, held by b: blocked %v, want [nas]", blocked)
	}
	acquire, blocked, _ := Take(&g, input(carrying(v1alpha1.BreakerClosed, holder("b", "b-x-1"))), mine, run, t0)
	if len(blocked) > 0 || !equalHolders(holdersOf(acquire), map[string][]string{"nas": {"a/a-x-2", "b/b-x-1"}}) {
		t.Errorf("closed, held by b: blocked %v, acquire %v; want both holding", blocked, holdersOf(acquire))
	}
	naming := []v1alpha1.OaatGroup{group("w-early", []string{"nas"}, "", after(-time.Minute)), group("w-late", []string{"nas"}, "", after(time.Minute))}
	var woken []string
	for _, key := range ToWake(carrying(v1alpha1.BreakerOpen), naming) {
		woken = append(woken, key.Name)
	}
	if !slices.Equal(woken, []string{"w-early"}) {
		t.Errorf("open, free: woke %v, want [w-early]", woken)
	}
}

// TestBreakerChanged: any change of the carried breaker, or of whether the lock carries it,
// concerns every group naming the lock; a change of holders alone does not.
func TestBreakerChanged(t *testing.T) {
	opened := carrying(v1alpha1.BreakerOpen)
	pushed := opened.DeepCopy()
	pushed.Status.CircuitBreaker.NextProbeAt = &metav1.Time{Time: t0}
	held := opened.DeepCopy()
	held.Status.Holders = []v1alpha1.LockHolder{holder("b", "b-x-1")}
	dropped := opened.DeepCopy()
	dropped.Spec.CircuitBreaker = v1alpha1.LockBreakerNone
	for _, tc := range []struct {
		name          string
		before, after v1alpha1.Lock
		want          bool
	}{
		{name: "opened", before: carrying(""), after: opened, want: true},
		{name: "closed", before: opened, after: carrying(v1alpha1.BreakerClosed), want: true},
		{name: "next probe pushed", before: opened, after: pushed, want: true},
		{name: "no longer carried", before: opened, after: dropped, want: true},
		{name: "a holder added", before: opened, after: held, want: false},
	} {
		if got := BreakerChanged(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: BreakerChanged %v, want %v", tc.name, got, tc.want)
		}
	}
}
