package main

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestLedgerOutcomes: the write that ends a run records its item's reason and whether its failure
// count grew, which checkEvictions judges evicted runs by.
func TestLedgerOutcomes(t *testing.T) {
	l := newLedger()
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	running := func(pod string, items ...v1alpha1.ItemStatus) *v1alpha1.OaatGroup {
		g := &v1alpha1.OaatGroup{ObjectMeta: metav1.ObjectMeta{Name: "g"}}
		g.Status.Items = items
		if pod != "" {
			g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "a", PodName: pod}
		}
		return g
	}
	failure := metav1.NewTime(at)
	l.observeAt(running("g-a-1", v1alpha1.ItemStatus{Name: "a"}), at)
	l.observeAt(running("g-a-2", v1alpha1.ItemStatus{Name: "a", LastPodName: "g-a-1", LastReason: string(v1alpha1.ReasonDisrupted)}), at)
	l.observeAt(running("", v1alpha1.ItemStatus{Name: "a", LastPodName: "g-a-2", LastReason: string(v1alpha1.ReasonPodNotFound),
		LastFailure: &failure, FailureCount: 1}), at)

	for pod, want := range map[string]outcome{
		"g-a-1": {reason: string(v1alpha1.ReasonDisrupted)},
		"g-a-2": {reason: string(v1alpha1.ReasonPodNotFound), failed: true},
	} {
		if got, ok := l.outcomeOf(pod); !ok || got != want {
			t.Errorf("outcome of %s = %+v, %v; want %+v", pod, got, ok, want)
		}
	}
	if _, ok := l.outcomeOf("g-a-3"); ok {
		t.Errorf("a run never seen has an outcome")
	}
}
