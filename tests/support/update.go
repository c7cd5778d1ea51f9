package support

import (
	"context"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Update reads the object named key into obj, changes it with mutate and writes it, reading and
// changing it again on a conflict (another writer, the operator or a controller, came between).
func Update[T client.Object](ctx context.Context, c client.Client, key client.ObjectKey, obj T, mutate func(T)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, obj); err != nil {
			return err
		}
		mutate(obj)
		return c.Update(ctx, obj)
	})
}
