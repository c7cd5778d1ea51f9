package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// cacheSyncWait is how long a readiness probe waits for the caches before it answers not ready.
const cacheSyncWait = 100 * time.Millisecond

// CachesSynced is the manager's readiness check: ready once the caches of the groups and their
// pods (the bulk of what a start lists: a thousand groups keep ten thousand pods) and of every
// informer started so far have synced. Before that the process cannot act, and a probe that says
// otherwise hides a slow start: a standby that keeps its caches warm (EnableWarmup) is ready as
// soon as it could lead.
func CachesSynced(c cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), cacheSyncWait)
		defer cancel()
		for _, obj := range []client.Object{&v1alpha1.OaatGroup{}, &corev1.Pod{}} {
			informer, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
			if err != nil {
				return fmt.Errorf("the informer of %T: %w", obj, err)
			}
			if !informer.HasSynced() {
				return fmt.Errorf("the cache of %T has not synced yet", obj)
			}
		}
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the caches have not synced yet")
		}
		return nil
	}
}
