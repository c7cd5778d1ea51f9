package controllers

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duepriority"
	"github.com/oaat-io/oaat-operator/internal/forecast"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// TestForecaster: a pass for which a forecast is due hands it over once (a second pass of the
// same generation while it is pending or made and not written hands nothing); the forecaster
// makes it off the pass, queues the group at the priority of a group with nothing due, and the
// next pass writes the condition it made; a deleted group's forecast is forgotten.
func TestForecaster(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newForecaster()
	q := priorityqueue.New[reconcile.Request]("forecaster-test")
	defer q.ShutDown()
	if err := f.source().Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	g := builders.Group("a", "b").Created(-24 * time.Hour).Generation(1).Obj()
	in := planner.Input{Group: g, Type: builders.Type().Obj(), Now: builders.T0, Rand: rand.New(rand.NewPCG(1, 1))}
	plan := planner.Decide(in)
	key := types.NamespacedName{Namespace: g.Namespace, Name: g.Name}

	f.consider(key, in, plan)
	f.consider(key, in, plan)
	if len(f.order) != 1 || len(f.pending) != 1 {
		t.Fatalf("%d queued, %d pending after two passes of the same generation: want one forecast", len(f.order), len(f.pending))
	}
	go func() { _ = f.Start(ctx) }()
	woken, priority, _ := q.GetWithPriority()
	if woken.NamespacedName != key || priority != duepriority.Idle {
		t.Fatalf("queued %v at priority %d, want %v at %d", woken, priority, key, duepriority.Idle)
	}
	made := f.atRisk(key)
	if want := forecast.AtRisk(in, plan); made == nil || !cmp.Equal(want, *made) {
		t.Fatalf("made %+v, want %+v", made, want)
	}
	f.consider(key, in, plan)
	if len(f.pending) != 0 {
		t.Error("a pass before the condition made is written handed over another forecast of the same generation")
	}

	in.AtRisk = made
	written := meta.FindStatusCondition(planner.Decide(in).Status.Conditions, v1alpha1.ConditionAtRisk)
	if written == nil || !cmp.Equal(*made, *written) {
		t.Errorf("the next pass writes %+v, want %+v", written, made)
	}
	f.forget(key)
	if f.atRisk(key) != nil {
		t.Error("the forecast of a deleted group is kept")
	}
}
