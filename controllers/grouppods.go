package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// A group's pods are listed from the cache through an index of the pods by the value of their
// group label (podGroupIndex): a label selector would make the cache scan every cached pod of the
// namespace, and a namespace of 5,000 groups holds 10,000 pods or more, so that each pass would
// cost in proportion to the namespace rather than to the group. Lists from the API server
// (APIReader) select by the label itself: the API server knows no index of the cache.

// podGroup is the value podGroupIndex indexes a pod under: the group its label names, if any.
func podGroup(obj client.Object) []string {
	if name, ok := obj.GetLabels()[v1alpha1.LabelGroup]; ok {
		return []string{name}
	}
	return nil
}

// cachedGroupPods lists from the cache the pods whose group label names the group.
func cachedGroupPods(ctx context.Context, c client.Reader, namespace, group string) (*corev1.PodList, error) {
	pods := &corev1.PodList{}
	err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingFields{podGroupIndex: group})
	return pods, err
}

// podEnded reports whether the pod of that key, as reader shows it, has ended or is gone: a
// run's slot is kept for it only while it is live.
func podEnded(ctx context.Context, reader client.Reader, key client.ObjectKey) (bool, error) {
	pod := &corev1.Pod{}
	err := reader.Get(ctx, key, pod)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading pod %s: %w", key.Name, err)
	}
	return podbuild.Terminal(pod), nil
}
