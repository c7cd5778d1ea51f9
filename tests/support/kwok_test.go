package support

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestOnKwokNodesToleratesTheTaintAndSelectsTheLabel(t *testing.T) {
	spec := &corev1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}}
	OnKwokNodes(spec)
	want := []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: "Equal", Value: "fake", Effect: "NoSchedule"}}
	if !equality.Semantic.DeepEqual(spec.Tolerations, want) {
		t.Errorf("tolerations: got %+v, want %+v", spec.Tolerations, want)
	}
	if got := spec.NodeSelector; got["type"] != "kwok" || got["disk"] != "ssd" || len(got) != 2 {
		t.Errorf("node selector: got %v, want type=kwok kept beside disk=ssd", got)
	}
}
