package controllers

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// A tick that finds items of the previous round not yet succeeded is counted once, and only once
// the status that starts the merged round is persisted: a status write lost to a conflict counts
// nothing and sends no event; the pass that wins counts it; later passes do not count it again.
func TestRoundOverrunCountedOnceItsStatusIsPersisted(t *testing.T) {
	group := builders.Group("a", "b").Named("nightly").Obj()
	group.Spec.Frequency, group.Spec.Schedule = "", "0 * * * *"
	group.CreationTimestamp = metav1.NewTime(builders.T0.Add(-24 * time.Hour))
	previous, next := metav1.NewTime(builders.T0.Add(-time.Hour)), metav1.NewTime(builders.T0)
	group.Status.RoundStartedAt, group.Status.NextRoundAt = &previous, &next
	done := metav1.NewTime(builders.T0.Add(-50 * time.Minute))
	group.Status.Items = []v1alpha1.ItemStatus{{Name: "a", LastSuccess: &done}, {Name: "b"}}

	var conflicts atomic.Int32
	conflicts.Store(1)
	server := newFakeClient(t, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if _, ok := obj.(*v1alpha1.OaatGroup); ok && conflicts.Add(-1) >= 0 {
				return apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "oaatgroups"}, obj.GetName(), nil)
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}, builders.Type().Obj(), group)
	r := newTestReconciler(server, server)
	registry := prometheus.NewRegistry()
	if err := metrics.Register(registry, r.Runs, metrics.NewStatusCollector(server, r.clock)); err != nil {
		t.Fatal(err)
	}
	overruns := func() string {
		t.Helper()
		families, err := registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == "oaat_round_overruns_total" {
				return f.String()
			}
		}
		return ""
	}

	r.clock.SetTime(builders.T0.Add(time.Second))
	if _, err := r.reconcile(t, "nightly"); err != nil {
		t.Fatal(err)
	}
	if got := overruns(); got != "" {
		t.Fatalf("counted an overrun whose status was not written: %s", got)
	}
	if events := drainEvents(r.recorder); slices.ContainsFunc(events, func(e string) bool { return strings.Contains(e, string(v1alpha1.ReasonRoundOverrun)) }) {
		t.Fatalf("events of an unwritten status: %v", events)
	}

	for range 3 {
		if _, err := r.reconcile(t, "nightly"); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP oaat_round_overruns_total Ticks of a group's spec.schedule that came while items of the previous round had not yet succeeded (the rounds merged).
# TYPE oaat_round_overruns_total counter
oaat_round_overruns_total{group="nightly",namespace="ns"} 1
`
	if err := testutil.GatherAndCompare(registry, strings.NewReader(want), "oaat_round_overruns_total"); err != nil {
		t.Fatal(err)
	}
	persisted := getGroup(t, server, "nightly")
	if c := meta.FindStatusCondition(persisted.Status.Conditions, v1alpha1.ConditionRoundOverrun); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("RoundOverrun = %+v", c)
	}
	if !persisted.Status.RoundStartedAt.Equal(&next) {
		t.Fatalf("roundStartedAt = %s, want the tick %s", persisted.Status.RoundStartedAt, next)
	}
	events := drainEvents(r.recorder)
	if n := len(slices.DeleteFunc(events, func(e string) bool { return !strings.Contains(e, "Warning "+string(v1alpha1.ReasonRoundOverrun)) })); n != 1 {
		t.Fatalf("%d RoundOverrun events, want 1", n)
	}
}
