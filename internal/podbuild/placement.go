package podbuild

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// ClaimNames returns the names of the PersistentVolumeClaims the pod mounts, without duplicates.
func ClaimNames(pod *corev1.Pod) []string {
	var names []string
	for _, v := range pod.Spec.Volumes {
		if pvc := v.PersistentVolumeClaim; pvc != nil && !slices.Contains(names, pvc.ClaimName) {
			names = append(names, pvc.ClaimName)
		}
	}
	return names
}

// PlacesItself reports whether the pod chooses its node itself (nodeName, nodeSelector or a
// required node affinity from its OaatType's template): the operator then adds no placement of its
// own. A node affinity with preferred terms only is a wish the scheduler may pass over; it does
// not place the pod.
func PlacesItself(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" || len(pod.Spec.NodeSelector) > 0 ||
		(pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil &&
			pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)
}

// PlaceWithClaims puts the pod on the node where its ReadWriteOnce claims are mounted already,
// since a ReadWriteOnce volume attached to one node cannot be mounted on another. inUse maps each
// ReadWriteOnce claim of the pod to the nodes of the live pods that mount it. When they are all on
// one node, PlaceWithClaims requires that node (a node affinity on metadata.name) and returns it;
// otherwise (no claim in use, or in use on several nodes, which no node can satisfy) it leaves the
// pod to the scheduler and returns "". A pod that places itself (PlacesItself) is left as it is;
// the preferred terms of a node affinity are kept beside the required node.
func PlaceWithClaims(pod *corev1.Pod, inUse map[string][]string) string {
	if PlacesItself(pod) {
		return ""
	}
	var nodes []string
	for _, claim := range ClaimNames(pod) {
		for _, node := range inUse[claim] {
			if !slices.Contains(nodes, node) {
				nodes = append(nodes, node)
			}
		}
	}
	if len(nodes) != 1 {
		return ""
	}
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: nodes}},
	}}}
	return nodes[0]
}
