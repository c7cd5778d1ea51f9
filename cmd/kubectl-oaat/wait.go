package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/statusview"
)

// waitForRun follows the OaatRun key until it has finished, writing to out a line
// "<time> <state>" each time its state changes, and returns nil only if it succeeded. It watches
// the one OaatRun and, when the watch fails or ends, lists it again and watches on, so that a
// lost connection or an expired resource version costs nothing but a re-list.
func waitForRun(ctx context.Context, c client.WithWatch, key client.ObjectKey, timeout time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ref := runResource + "/" + key.Name
	var last *v1alpha1.OaatRun
	shown := ""
	exists := func(store cache.Store) (bool, error) {
		if _, ok, err := store.GetByKey(key.String()); err != nil || !ok {
			return false, errors.Join(errors.New("it no longer exists"), err)
		}
		return false, nil
	}
	_, err := watchtools.UntilWithSync(ctx, runListWatch(c, key), &v1alpha1.OaatRun{}, exists, func(ev watch.Event) (bool, error) {
		if ev.Type == watch.Deleted {
			return false, errors.New("it was deleted before it finished")
		}
		r, ok := ev.Object.(*v1alpha1.OaatRun)
		if !ok {
			return false, nil
		}
		last = r
		if state := statusview.RunState(r); state != shown {
			shown = state
			fmt.Fprintf(out, "%s %s\n", time.Now().Format(time.TimeOnly), state)
		}
		return r.Status.Phase.Finished(), nil
	})
	switch {
	case err == nil:
		return outcome(ref, last)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("timed out after %v waiting for %s to finish (%s); the OaatRun remains", timeout, ref, phaseOf(last))
	}
	return fmt.Errorf("waiting for %s: %w", ref, err)
}

// runListWatch lists and watches the one OaatRun key, by a field selector on its name.
func runListWatch(c client.WithWatch, key client.ObjectKey) *cache.ListWatch {
	byName := fields.OneTermEqualSelector("metadata.name", key.Name)
	options := func(raw metav1.ListOptions) *client.ListOptions {
		return &client.ListOptions{Namespace: key.Namespace, FieldSelector: byName, Raw: &raw}
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, raw metav1.ListOptions) (runtime.Object, error) {
			list := &v1alpha1.OaatRunList{}
			return list, c.List(ctx, list, options(raw))
		},
		WatchFuncWithContext: func(ctx context.Context, raw metav1.ListOptions) (watch.Interface, error) {
			w, err := c.Watch(ctx, &v1alpha1.OaatRunList{}, options(raw))
			if err != nil && ctx.Err() != nil {
				// The wait is over: io.EOF keeps the informer from logging the cancellation as a
				// failure on the user's terminal.
				return nil, io.EOF
			}
			return w, err
		},
	}
}

// outcome is nil for a run that succeeded, and says how it ended otherwise (failed or rejected).
func outcome(ref string, r *v1alpha1.OaatRun) error {
	if r.Status.Phase == v1alpha1.OaatRunSucceeded {
		return nil
	}
	return fmt.Errorf("%s did not succeed: %s", ref, statusview.RunState(r))
}

// phaseOf says where a run stands, for a message; r is nil when it has not been seen.
func phaseOf(r *v1alpha1.OaatRun) string {
	if r == nil || r.Status.Phase == "" {
		return "the operator has not seen it yet"
	}
	return "phase " + string(r.Status.Phase)
}
