package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// observer follows the pods and the groups of the chaos run's namespaces with informers, which, unlike
// a bare watch, survive the restart of the API server: when their watch cannot resume they list
// again and report what changed meanwhile (a pod gone meanwhile as deleted). Pod events feed the
// pod recorder and its overlap tracker; group updates feed
// the ledger, in the order of the group's writes.
type observer struct {
	pods   *perfkit.PodRecorder
	ledger *ledger
}

// start runs the informers until ctx ends and waits until they have synced.
func (o *observer) start(ctx context.Context, cfg *rest.Config, namespaces []string) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	watched := map[string]cache.Config{}
	for _, ns := range namespaces {
		watched[ns] = cache.Config{}
	}
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: watched})
	if err != nil {
		return err
	}
	podInformer, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	if _, err := podInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.pod(watch.Added, obj) },
		UpdateFunc: func(_, obj any) { o.pod(watch.Modified, obj) },
		DeleteFunc: func(obj any) { o.pod(watch.Deleted, obj) },
	}); err != nil {
		return err
	}
	groupInformer, err := c.GetInformer(ctx, &v1alpha1.OaatGroup{})
	if err != nil {
		return err
	}
	if _, err := groupInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.group(obj) },
		UpdateFunc: func(_, obj any) { o.group(obj) },
	}); err != nil {
		return err
	}
	go func() { _ = c.Start(ctx) }()
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		return fmt.Errorf("the observer's informers did not sync")
	}
	return nil
}

func (o *observer) pod(t watch.EventType, obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if pod, ok := obj.(*corev1.Pod); ok && pod.Labels[v1alpha1.LabelGroup] != "" {
		ev := watch.Event{Type: t, Object: pod}
		_ = o.pods.Observe(ev) // never an ERROR event here
	}
}

func (o *observer) group(obj any) {
	if g, ok := obj.(*v1alpha1.OaatGroup); ok {
		o.ledger.observe(g)
	}
}
