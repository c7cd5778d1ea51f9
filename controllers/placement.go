package controllers

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// place puts an item pod that mounts ReadWriteOnce claims on the node where live pods mount them
// already (podbuild.PlaceWithClaims), before it is created. It is best effort: a claim or pod
// that cannot be read leaves the pod to the scheduler (spec.pendingTimeout ends a pod that then
// cannot mount its volume), and is logged, not returned: the run's intent is persisted already.
func (r *OaatGroupReconciler) place(ctx context.Context, pod *corev1.Pod) {
	if podbuild.PlacesItself(pod) || len(podbuild.ClaimNames(pod)) == 0 {
		return
	}
	inUse, err := r.claimsInUse(ctx, pod)
	if err != nil {
		log.FromContext(ctx).Error(err, "Cannot tell where the pod's claims are in use; leaving its node to the scheduler", "pod", pod.Name)
		return
	}
	if node := podbuild.PlaceWithClaims(pod, inUse); node != "" {
		log.FromContext(ctx).Info("Placing the pod on the node where its ReadWriteOnce claims are in use", "pod", pod.Name, "node", node)
	}
}

// claimsInUse maps each ReadWriteOnce claim that the pod mounts to the nodes of the live pods of
// its namespace that mount it, read from the API server: the manager's cache holds only the
// operator's own pods. A claim that does not exist is left out.
func (r *OaatGroupReconciler) claimsInUse(ctx context.Context, pod *corev1.Pod) (map[string][]string, error) {
	var readWriteOnce []string
	for _, name := range podbuild.ClaimNames(pod) {
		claim := &corev1.PersistentVolumeClaim{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, claim)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading PersistentVolumeClaim %s: %w", name, err)
		}
		if slices.Contains(claim.Spec.AccessModes, corev1.ReadWriteOnce) {
			readWriteOnce = append(readWriteOnce, name)
		}
	}
	if len(readWriteOnce) == 0 {
		return nil, nil
	}
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(pod.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the pods of the namespace: %w", err)
	}
	inUse := map[string][]string{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || podbuild.Terminal(p) || podbuild.Gone(p) {
			continue
		}
		for _, name := range podbuild.ClaimNames(p) {
			if slices.Contains(readWriteOnce, name) {
				inUse[name] = append(inUse[name], p.Spec.NodeName)
			}
		}
	}
	return inUse, nil
}
