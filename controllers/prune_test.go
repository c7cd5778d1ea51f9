package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// TestSupersededPodsGoTogether: a busy group keeps its superseded finished pods; once it goes idle
// they are deleted in one request, and the latest pod of each item stays.
func TestSupersededPodsGoTogether(t *testing.T) {
	var deleteAllOf, deletes int
	server := newFakeClient(t, interceptor.Funcs{
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			deleteAllOf++
			return c.DeleteAllOf(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			deletes++
			return c.Delete(ctx, obj, opts...)
		},
	}, builders.Type().Obj(), builders.Group("a", "b").Named("g").Obj())
	r := newTestReconciler(server, server)
	step := func(want string) string {
		t.Helper()
		if _, err := r.reconcile(t, "g"); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		cr := getGroup(t, server, "g").Status.CurrentRun
		if cr == nil {
			if want != "" {
				t.Fatalf("no run, want one of item %s", want)
			}
			return ""
		}
		if cr.Item != want {
			t.Fatalf("running item %s, want %s", cr.Item, want)
		}
		return cr.PodName
	}
	first := step("a")
	r.clock.Step(10 * time.Second)
	finishPod(t, server, first, 0, r.clock.Now())
	second := step("b")
	r.clock.Step(10 * time.Second)
	finishPod(t, server, second, 0, r.clock.Now())
	step("") // both succeeded within frequency (1h): idle
	r.clock.Step(2 * time.Hour)
	third := step("a")
	r.clock.Step(10 * time.Second)
	finishPod(t, server, third, 0, r.clock.Now())
	fourth := step("b") // a's first pod is superseded; the group is busy
	if names := podNames(listPods(t, server)); !slices.Contains(names, first) || deleteAllOf != 0 {
		t.Fatalf("a busy group deleted its superseded pod: pods %v, deletecollections %d", names, deleteAllOf)
	}
	r.clock.Step(10 * time.Second)
	finishPod(t, server, fourth, 0, r.clock.Now())
	step("")
	names := podNames(listPods(t, server))
	slices.Sort(names)
	want := []string{third, fourth}
	slices.Sort(want)
	if !slices.Equal(names, want) || deleteAllOf != 1 || deletes != 0 {
		t.Fatalf("pods %v (want %v), deletecollections %d (want 1), single deletes %d (want 0)", names, want, deleteAllOf, deletes)
	}
}
