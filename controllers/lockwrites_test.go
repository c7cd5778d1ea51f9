package controllers

import (
	"context"
	"errors"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// TestGroupClientRefusesLockWrites: through the OaatGroup reconciler's client (noLockWrites, as
// Setup and the test reconciler give it), every write of an OaatLock or a ClusterOaatLock, of the
// object or of its status, fails with errGroupWritesLock and reaches no server; a group's own
// writes go through.
func TestGroupClientRefusesLockWrites(t *testing.T) {
	ctx := context.Background()
	g := builders.Group("a").Named("g").Obj()
	nas := builders.Lock("nas", 1)
	shared := builders.ClusterLock("shared", 1)
	server := newFakeClient(t, interceptor.Funcs{}, g, nas, shared)
	c := noLockWrites{server}
	for _, lock := range []client.Object{nas, shared} {
		writes := map[string]func() error{
			"create":             func() error { return c.Create(ctx, lock.DeepCopyObject().(client.Object)) },
			"update":             func() error { return c.Update(ctx, lock) },
			"patch":              func() error { return c.Patch(ctx, lock, client.MergeFrom(lock)) },
			"delete":             func() error { return c.Delete(ctx, lock) },
			"status update":      func() error { return c.Status().Update(ctx, lock) },
			"status patch":       func() error { return c.Status().Patch(ctx, lock, client.MergeFrom(lock)) },
			"status create":      func() error { return c.Status().Create(ctx, lock, lock) },
			"subresource update": func() error { return c.SubResource("status").Update(ctx, lock) },
			"subresource patch":  func() error { return c.SubResource("status").Patch(ctx, lock, client.MergeFrom(lock)) },
		}
		for verb, write := range writes {
			if err := write(); !errors.Is(err, errGroupWritesLock) {
				t.Errorf("%s of %T: error %v, want errGroupWritesLock", verb, lock, err)
			}
		}
	}
	if err := server.Get(ctx, client.ObjectKeyFromObject(nas), &v1alpha1.OaatLock{}); err != nil {
		t.Errorf("the lock after the refused writes: %v", err)
	}
	g.Status.RunCount = 7
	if err := c.Status().Update(ctx, g); err != nil {
		t.Errorf("the group's own status write: %v", err)
	}
}
