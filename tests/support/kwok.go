package support

import corev1 "k8s.io/api/core/v1"

// The kind of node a pod of the local cluster (hack/cluster/cluster.sh) runs on. kwok's fake
// nodes carry the taint KwokTaintKey=KwokTaintValue:NoSchedule and the label KwokNodeLabel=
// KwokNodeLabelValue; the real node (OAAT_CLUSTER_REAL_NODE=1) carries neither. A pod without the
// toleration therefore runs on the real node (or stays Pending without one), as on a real
// cluster; a pod that kwok is to play (its oaat.io/test-* annotations) needs both.
const (
	// KwokTaintKey is the key of the taint of kwok's nodes.
	KwokTaintKey = "kwok.x-k8s.io/node"
	// KwokTaintValue is the value of the taint of kwok's nodes.
	KwokTaintValue = "fake"
	// KwokNodeLabel is the key of the label of kwok's nodes.
	KwokNodeLabel = "type"
	// KwokNodeLabelValue is the value of the label of kwok's nodes.
	KwokNodeLabelValue = "kwok"
)

// KwokToleration tolerates the taint of kwok's nodes.
func KwokToleration() corev1.Toleration {
	return corev1.Toleration{
		Key: KwokTaintKey, Operator: corev1.TolerationOpEqual, Value: KwokTaintValue,
		Effect: corev1.TaintEffectNoSchedule,
	}
}

// OnKwokNodes makes spec a pod that runs on kwok's nodes only: it tolerates their taint and
// selects their label. It returns spec.
func OnKwokNodes(spec *corev1.PodSpec) *corev1.PodSpec {
	spec.Tolerations = append(spec.Tolerations, KwokToleration())
	if spec.NodeSelector == nil {
		spec.NodeSelector = map[string]string{}
	}
	spec.NodeSelector[KwokNodeLabel] = KwokNodeLabelValue
	return spec
}
