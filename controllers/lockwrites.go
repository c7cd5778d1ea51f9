package controllers

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// errGroupWritesLock is what a write of a lock through the OaatGroup reconciler's client returns:
// a lock's status has one writer, the lock's reconciler (locks.Decide), and a group only asks,
// through its own status.lockWait.
var errGroupWritesLock = errors.New("the OaatGroup reconciler writes no OaatLock or ClusterOaatLock: a lock's status has one writer, the lock's reconciler")

// noLockWrites is the OaatGroup reconciler's client: the manager's, refusing every write of a lock
// (errGroupWritesLock), so that no code path of a group's pass can write one, whatever a later
// change adds; every test and suite that runs the reconciler runs it through this client.
type noLockWrites struct {
	client.Client
}

// refuseLock returns errGroupWritesLock, naming the verb, when obj is a lock.
func refuseLock(verb string, obj client.Object) error {
	if _, ok := obj.(v1alpha1.Lock); ok {
		return fmt.Errorf("%s %s: %w", verb, client.ObjectKeyFromObject(obj), errGroupWritesLock)
	}
	return nil
}

// Create implements client.Writer.
func (c noLockWrites) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := refuseLock("create", obj); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

// Update implements client.Writer.
func (c noLockWrites) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := refuseLock("update", obj); err != nil {
		return err
	}
	return c.Client.Update(ctx, obj, opts...)
}

// Patch implements client.Writer.
func (c noLockWrites) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := refuseLock("patch", obj); err != nil {
		return err
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

// Delete implements client.Writer.
func (c noLockWrites) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := refuseLock("delete", obj); err != nil {
		return err
	}
	return c.Client.Delete(ctx, obj, opts...)
}

// Status implements client.StatusClient.
func (c noLockWrites) Status() client.SubResourceWriter { return noLockSubWrites{c.Client.Status()} }

// SubResource implements client.SubResourceClientConstructor.
func (c noLockWrites) SubResource(sub string) client.SubResourceClient {
	return noLockSubResource{SubResourceClient: c.Client.SubResource(sub), writes: noLockSubWrites{c.Client.SubResource(sub)}}
}

// noLockSubWrites refuses the subresource writes of a lock.
type noLockSubWrites struct {
	client.SubResourceWriter
}

// Create implements client.SubResourceWriter.
func (w noLockSubWrites) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if err := refuseLock("create a subresource of", obj); err != nil {
		return err
	}
	return w.SubResourceWriter.Create(ctx, obj, sub, opts...)
}

// Update implements client.SubResourceWriter.
func (w noLockSubWrites) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := refuseLock("update the status of", obj); err != nil {
		return err
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

// Patch implements client.SubResourceWriter.
func (w noLockSubWrites) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := refuseLock("patch the status of", obj); err != nil {
		return err
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// noLockSubResource is a subresource client whose writes refuse locks.
type noLockSubResource struct {
	client.SubResourceClient
	writes noLockSubWrites
}

// Create implements client.SubResourceWriter.
func (s noLockSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return s.writes.Create(ctx, obj, sub, opts...)
}

// Update implements client.SubResourceWriter.
func (s noLockSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.writes.Update(ctx, obj, opts...)
}

// Patch implements client.SubResourceWriter.
func (s noLockSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.writes.Patch(ctx, obj, patch, opts...)
}
