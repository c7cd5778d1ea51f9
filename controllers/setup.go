package controllers

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
	"github.com/oaat-io/oaat-operator/internal/itemsource"
	"github.com/oaat-io/oaat-operator/internal/leader"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/notify"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// Field indexes: OaatGroups by the OaatTypes (spec.oaatType, spec.verify.oaatType) and the ConfigMaps they name (and by whether they
// take claims, claimSourceIndex), OaatRuns by the OaatGroup they name, pods by the group of their
// label (podGroupIndex).
const (
	oaatTypeIndex  = "spec.oaatType"
	configMapIndex = "spec.oaatItemsFrom.configMap.name"
	oaatGroupIndex = "spec.oaatGroup"
	podGroupIndex  = "metadata.labels." + v1alpha1.LabelGroup
)

// CacheOptions limits what the manager watches and keeps: only the given namespaces (all when
// none are given, for the AllNamespaces install mode), only the pods that carry an OaatGroup's
// label, since the operator never needs the others and a cluster may have many, and of those
// only what the operator reads (trimPod); of ConfigMaps only the metadata of those that opted in
// as item sources (a ConfigMap whose label is removed leaves the watch with a delete event, so
// the groups naming it look again and refuse it); of PersistentVolumeClaims only the metadata
// (claimMetadata, watched with builder.OnlyMetadata); no object's managedFields.
func CacheOptions(namespaces ...string) cache.Options {
	hasGroup, err := labels.NewRequirement(v1alpha1.LabelGroup, selection.Exists, nil)
	if err != nil {
		panic(fmt.Sprintf("invalid label requirement: %v", err)) // a constant; cannot fail
	}
	opts := cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:       {Label: labels.NewSelector().Add(*hasGroup), Transform: trimPod},
			configMapMetadata(): {Label: labels.SelectorFromSet(labels.Set{v1alpha1.LabelItemSource: "true"})},
		},
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = make(map[string]cache.Config, len(namespaces))
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// configMapMetadata is the object the manager watches ConfigMaps as: their metadata only.
func configMapMetadata() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
}

// trimPod keeps of a cached pod what the operator reads (planner.Trim): a thousand groups keep
// ten thousand pods. Objects other than pods (a deletion tombstone) pass.
func trimPod(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		return planner.Trim(pod), nil
	}
	return obj, nil
}

// WatchNamespaces parses the value of WATCH_NAMESPACE, which OLM sets from the OperatorGroup's
// target namespaces: a comma-separated list, empty for all namespaces.
func WatchNamespaces(value string) []string {
	var namespaces []string
	for _, ns := range strings.Split(value, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			namespaces = append(namespaces, ns)
		}
	}
	return namespaces
}

// oaatTypesOf are the OaatTypes a group names: spec.oaatType, and spec.verify.oaatType.
func oaatTypesOf(obj client.Object) []string {
	spec := &obj.(*v1alpha1.OaatGroup).Spec
	if spec.Verify != nil && spec.Verify.OaatType != spec.OaatType {
		return []string{spec.OaatType, spec.Verify.OaatType}
	}
	return []string{spec.OaatType}
}

// setupIndexes registers the field indexes both reconcilers list by.
func setupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.OaatGroup{}, oaatTypeIndex,
		oaatTypesOf); err != nil {
		return fmt.Errorf("indexing OaatGroups by OaatType: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.OaatGroup{}, configMapIndex,
		func(obj client.Object) []string {
			return itemsource.Names(&obj.(*v1alpha1.OaatGroup).Spec)
		}); err != nil {
		return fmt.Errorf("indexing OaatGroups by ConfigMap: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.OaatGroup{}, claimSourceIndex, takesClaimsValue); err != nil {
		return fmt.Errorf("indexing OaatGroups by their claim sources: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.OaatRun{}, oaatGroupIndex,
		func(obj client.Object) []string {
			return []string{obj.(*v1alpha1.OaatRun).Spec.OaatGroup}
		}); err != nil {
		return fmt.Errorf("indexing OaatRuns by OaatGroup: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, podGroupIndex, podGroup); err != nil {
		return fmt.Errorf("indexing pods by OaatGroup: %w", err)
	}
	return setupLockIndexes(ctx, mgr)
}

// Options configure the reconcilers that Setup registers.
type Options struct {
	// Clock is the time source of every decision.
	Clock clock.PassiveClock
	// Seed makes the random tie-breaks reproducible.
	Seed uint64
	// Runs counts runs and on-demand runs.
	Runs *metrics.RunMetrics
	// MaxConcurrentReconciles is how many groups are reconciled at once; one group is never
	// reconciled by two workers at a time.
	MaxConcurrentReconciles int
	// Leader is the leader-election Lease and this process's identity in it, nil without leader
	// election: a pod is created only while this process holds the Lease.
	Leader *leader.Identity
	// LockMetrics observes lock waits; nil observes nothing.
	LockMetrics *metrics.LockMetrics
	// OnLeaseLost is called once when a check before a run finds that this process no longer
	// holds the Lease (see leader.Guard.OnLost).
	OnLeaseLost func(error)
	// Namespaces are the namespaces the manager's cache holds (WATCH_NAMESPACE, CacheOptions),
	// none when it holds all.
	Namespaces []string
	// AdoptionWindow is how long a ClusterOaatLock gives no slot after its creation to an
	// installation of some Namespaces (locks.DefaultAdoptionWindow when zero).
	AdoptionWindow time.Duration
	// HistoryRetention is how long the OaatGroupHistory of a deleted group is kept
	// (history.DefaultRetention when zero).
	HistoryRetention time.Duration
	// HistoryRefusalWait is how long a group being deleted waits for the API server to accept its
	// OaatGroupHistory once it refused it for good (history.DefaultRefusalWait when zero).
	HistoryRefusalWait time.Duration
	// Notify says where the groups' transitions go; its zero value sends none.
	Notify NotifyOptions
}

// NotifyOptions say where the groups' transitions go as CloudEvents.
type NotifyOptions struct {
	// Sink is the cluster-wide sink (--notify-sink), nil without one.
	Sink *notify.Sink
	// GroupSinkPrefixes are the URL prefixes a group's own sink may start with
	// (--notify-group-sink-prefixes); none refuses every group's sink.
	GroupSinkPrefixes []string
	// Send delivers a transition to a sink (notify.HTTPSender).
	Send notify.Sender
	// Metrics counts the deliveries; nil counts nothing.
	Metrics *metrics.NotifyMetrics
}

// Setup registers the field indexes and the reconcilers with the manager.
func Setup(mgr ctrl.Manager, opts Options) error {
	if err := setupIndexes(context.Background(), mgr); err != nil {
		return err
	}
	recorder := mgr.GetEventRecorder("oaat-operator")
	var guard *leader.Guard
	if opts.Leader != nil {
		guard = &leader.Guard{Reader: mgr.GetAPIReader(), Identity: *opts.Leader, Clock: opts.Clock, OnLost: opts.OnLeaseLost}
	}
	if err := (&OaatGroupReconciler{
		Client: noLockWrites{mgr.GetClient()}, APIReader: mgr.GetAPIReader(), Recorder: recorder,
		Clock: opts.Clock, Seed: opts.Seed, Runs: opts.Runs, MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		Leader: guard, LockMetrics: opts.LockMetrics, Namespaces: opts.Namespaces,
		HistoryRetention:   cmp.Or(opts.HistoryRetention, history.DefaultRetention),
		HistoryRefusalWait: cmp.Or(opts.HistoryRefusalWait, history.DefaultRefusalWait),
		Notify:             opts.Notify,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the OaatGroup controller: %w", err)
	}
	if err := (&OnDemandRunReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, Clock: opts.Clock, Runs: opts.Runs,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the OaatRun controller: %w", err)
	}
	for _, cluster := range []bool{false, true} {
		if err := (&OaatLockReconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, Cluster: cluster, Clock: opts.Clock,
			Namespaces: opts.Namespaces, Installation: locks.InstallationOf(opts.Namespaces),
			AdoptionWindow: cmp.Or(opts.AdoptionWindow, locks.DefaultAdoptionWindow),
		}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the lock controller (cluster-scoped: %t): %w", cluster, err)
		}
	}
	if err := (&OaatGroupHistoryReconciler{Client: mgr.GetClient(), Clock: opts.Clock}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the OaatGroupHistory controller: %w", err)
	}
	return nil
}
