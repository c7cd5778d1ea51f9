package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// oaatTypeIndex indexes OaatGroups by the OaatType they name.
const oaatTypeIndex = "spec.oaatType"

// CacheOptions limits what the manager watches: only the given namespaces (all when none are
// given, for the AllNamespaces install mode), and only the pods that carry an OaatGroup's label,
// since the operator never needs the others and a cluster may have many.
func CacheOptions(namespaces ...string) cache.Options {
	hasGroup, err := labels.NewRequirement(v1alpha1.LabelGroup, selection.Exists, nil)
	if err != nil {
		panic(fmt.Sprintf("invalid label requirement: %v", err)) // a constant; cannot fail
	}
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: labels.NewSelector().Add(*hasGroup)},
	}}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = make(map[string]cache.Config, len(namespaces))
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
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

// SetupWithManager registers the reconciler: it runs on changes of a group, of any pod carrying a
// group's label (owned or rogue), and of an OaatType, for every group that names it.
func (r *OaatGroupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.OaatGroup{}, oaatTypeIndex,
		func(obj client.Object) []string {
			return []string{obj.(*v1alpha1.OaatGroup).Spec.OaatType}
		}); err != nil {
		return fmt.Errorf("indexing OaatGroups by OaatType: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.OaatGroup{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToGroup)).
		Watches(&v1alpha1.OaatType{}, handler.EnqueueRequestsFromMapFunc(r.typeToGroups)).
		Named("oaatgroup").
		Complete(r)
}

// podToGroup maps a pod to the group named by its label.
func podToGroup(_ context.Context, pod client.Object) []reconcile.Request {
	name, ok := pod.GetLabels()[v1alpha1.LabelGroup]
	if !ok || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: pod.GetNamespace(), Name: name}}}
}

// typeToGroups maps an OaatType to the groups that name it.
func (r *OaatGroupReconciler) typeToGroups(ctx context.Context, ot client.Object) []reconcile.Request {
	groups := &v1alpha1.OaatGroupList{}
	if err := r.List(ctx, groups, client.InNamespace(ot.GetNamespace()),
		client.MatchingFields{oaatTypeIndex: ot.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the groups of an OaatType", "oaatType", klog.KObj(ot))
		return nil
	}
	requests := make([]reconcile.Request, 0, len(groups.Items))
	for i := range groups.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&groups.Items[i])})
	}
	return requests
}
