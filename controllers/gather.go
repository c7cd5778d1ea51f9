package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/itemsource"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// gather reads the snapshot a decision is made from. The cache may lag behind the API server; two
// lags would mislead the planner, so they are checked against the API server itself:
//   - a pod of the group with a run number above status.runCount means the cached group is older
//     than the pod, whose intent it does not show yet: the group is read again;
//   - the current run's pod missing from the cache may just have been created: it is read again
//     before it is taken as gone (currentRunPod).
//
// When the pod is one this manager created that no event had shown when the pass began
// (pending), no snapshot is made: gather returns its name, and the pass looks again once the
// event has come.
func (r *OaatGroupReconciler) gather(ctx context.Context, group *v1alpha1.OaatGroup, now time.Time, pending pending) (in planner.Input, awaited string, err error) {
	pods, err := cachedGroupPods(ctx, r.Client, group.Namespace, group.Name)
	if err != nil {
		return planner.Input{}, "", fmt.Errorf("listing pods of the group: %w", err)
	}
	if groupLagsPods(group, pods.Items) {
		fresh := &v1alpha1.OaatGroup{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(group), fresh); err != nil {
			return planner.Input{}, "", fmt.Errorf("reading the group again: %w", err)
		}
		group = fresh
	}
	if cr := group.Status.CurrentRun; cr != nil {
		awaited, err := r.currentRunPod(ctx, group, cr.PodName, pods, pending)
		if err != nil {
			return planner.Input{}, "", err
		}
		if awaited {
			return planner.Input{}, cr.PodName, nil
		}
	}

	typ, err := r.oaatType(ctx, group.Namespace, group.Spec.OaatType)
	if err != nil {
		return planner.Input{}, "", err
	}
	var verifyType *v1alpha1.OaatType
	if v := group.Spec.Verify; v != nil {
		if verifyType, err = r.oaatType(ctx, group.Namespace, v.OaatType); err != nil {
			return planner.Input{}, "", err
		}
	}

	configMaps, err := r.configMaps(ctx, group)
	if err != nil {
		return planner.Input{}, "", err
	}

	claims, err := r.claims(ctx, group)
	if err != nil {
		return planner.Input{}, "", err
	}

	onDemandRuns := &v1alpha1.OaatRunList{}
	if err := r.List(ctx, onDemandRuns, client.InNamespace(group.Namespace),
		client.MatchingFields{oaatGroupIndex: group.Name}); err != nil {
		return planner.Input{}, "", fmt.Errorf("listing the group's OaatRuns: %w", err)
	}

	locks, err := r.gatherLocks(ctx, group)
	if err != nil {
		return planner.Input{}, "", err
	}

	previous, err := r.previousHistory(ctx, group)
	if err != nil {
		return planner.Input{}, "", err
	}

	return planner.Input{
		Locks:        locks,
		Group:        group,
		Type:         typ,
		VerifyType:   verifyType,
		Pods:         pods.Items,
		OnDemandRuns: onDemandRuns.Items,
		ConfigMaps:   configMaps,
		Claims:       claims,
		Now:          now,
		Rand:         r.random(group),
		History:      previous,

		StatusRefusedAt: r.refusals.refusedAt(client.ObjectKeyFromObject(group)),
	}, "", nil
}

// oaatType reads the OaatType of that name in namespace, nil when there is none.
func (r *OaatGroupReconciler) oaatType(ctx context.Context, namespace, name string) (*v1alpha1.OaatType, error) {
	typ := &v1alpha1.OaatType{}
	switch err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, typ); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading OaatType %s: %w", name, err)
	}
	return typ, nil
}

// configMaps reads the ConfigMaps the group takes items from, from the API server: the manager
// watches only their metadata (a cluster's ConfigMaps can be many and large), to know when to
// read them again. A missing ConfigMap is left out.
func (r *OaatGroupReconciler) configMaps(ctx context.Context, group *v1alpha1.OaatGroup) (map[string]*corev1.ConfigMap, error) {
	names := itemsource.Names(&group.Spec)
	if len(names) == 0 {
		return nil, nil
	}
	found := make(map[string]*corev1.ConfigMap, len(names))
	for _, name := range names {
		cm := &corev1.ConfigMap{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: group.Namespace, Name: name}, cm)
		switch {
		case err == nil:
			found[name] = cm
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading ConfigMap %s: %w", name, err)
		}
	}
	return found, nil
}

// groupLagsPods reports whether one of the group's own pods is newer than the group's status.
func groupLagsPods(group *v1alpha1.OaatGroup, pods []corev1.Pod) bool {
	for i := range pods {
		if metav1.IsControlledBy(&pods[i], group) && podbuild.RunNumber(&pods[i]) > group.Status.RunCount {
			return true
		}
	}
	return false
}

func hasPod(pods []corev1.Pod, name string) bool {
	for i := range pods {
		if pods[i].Name == name {
			return true
		}
	}
	return false
}

// currentRunPod completes pods, the group's pods as the cache shows them, with the current run's
// pod when the cache does not show it. A pod this manager created that no event has shown yet is
// awaited (no snapshot is made); any other is read from the API server, and one the API server
// does not have either is left out: the planner takes it as gone.
func (r *OaatGroupReconciler) currentRunPod(ctx context.Context, group *v1alpha1.OaatGroup, name string, pods *corev1.PodList, pending pending) (awaited bool, err error) {
	if hasPod(pods.Items, name) {
		return false, nil
	}
	if pending.creating(name) {
		return true, nil
	}
	pod := &corev1.Pod{}
	err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: group.Namespace, Name: name}, pod)
	switch {
	case err == nil && metav1.IsControlledBy(pod, group):
		pods.Items = append(pods.Items, *pod)
	case err != nil && !apierrors.IsNotFound(err):
		return false, fmt.Errorf("reading pod %s of the current run: %w", name, err)
	}
	return false, nil
}
