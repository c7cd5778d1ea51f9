package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// countingClock counts the reads of the time.
type countingClock struct {
	clock.PassiveClock
	reads int
}

func (c *countingClock) Now() time.Time {
	c.reads++
	return c.PassiveClock.Now()
}

// Each pass of either reconciler reads the clock once, whatever it meets: every decision of the
// pass, including the fallbacks after a refusal, is made at one time.
func TestOneClockReadPerPass(t *testing.T) {
	refusePods := interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if _, ok := obj.(*corev1.Pod); ok {
			return apierrors.NewForbidden(podsResource, obj.GetName(), errors.New("exceeded quota"))
		}
		return c.Create(ctx, obj, opts...)
	}}
	rejectStatus := interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		if g, ok := obj.(*v1alpha1.OaatGroup); ok && g.Status.ItemCount > 0 {
			return apierrors.NewInvalid(groupKind, g.Name, field.ErrorList{field.Invalid(field.NewPath("status"), "", "no")})
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}
	// Each pass sets up a reconciler whose clock is clk, and runs one pass.
	groupPass := func(funcs interceptor.Funcs) func(*testing.T, *countingClock) error {
		return func(t *testing.T, clk *countingClock) error {
			t.Helper()
			server := newFakeClient(t, funcs, builders.Type().Obj(), builders.Group("a").Named("g").Obj())
			r := newTestReconciler(server, server)
			clk.PassiveClock, r.Clock = r.clock, clk
			_, err := r.reconcile(t, "g")
			return err
		}
	}
	onDemandRunPass := func(status v1alpha1.OaatRunStatus) func(*testing.T, *countingClock) error {
		return func(t *testing.T, clk *countingClock) error {
			t.Helper()
			c := newFakeClient(t, interceptor.Funcs{}, testOnDemandRun("r", "g", status))
			r := newOnDemandRunReconciler(c, c)
			clk.PassiveClock, r.Clock = r.clock, clk
			_, err := r.reconcile(t, "r")
			return err
		}
	}
	finished := stamp(builders.T0)
	passes := map[string]func(*testing.T, *countingClock) error{
		"group start":            groupPass(interceptor.Funcs{}),
		"group withdraw":         groupPass(refusePods),
		"group reject":           groupPass(rejectStatus),
		"on-demand run expiring": onDemandRunPass(v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunSucceeded, FinishedAt: &finished}),
		"on-demand run orphan":   onDemandRunPass(v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending}),
	}
	for name, pass := range passes {
		t.Run(name, func(t *testing.T) {
			clk := &countingClock{}
			if err := pass(t, clk); err != nil {
				t.Fatalf("pass: %v", err)
			}
			if clk.reads != 1 {
				t.Errorf("%d clock reads in one pass, want 1", clk.reads)
			}
		})
	}
}
