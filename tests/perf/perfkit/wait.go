package perfkit

import (
	"context"
	"time"
)

// Sleep waits for d unless ctx ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitFor polls cond every 200 ms until it holds, timeout passes or ctx ends; it returns whether
// it held.
func WaitFor(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return true
}
