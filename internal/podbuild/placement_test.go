package podbuild

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
)

// onNode is the node affinity PlaceWithClaims adds for node.
func onNode(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}}
}

func TestPlaceWithClaims(t *testing.T) {
	podAffinity := &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone"}}}
	preferred := []corev1.PreferredSchedulingTerm{{Weight: 10, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}},
	}}}
	pinnedPreferring := onNode("node-a")
	pinnedPreferring.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = preferred
	tests := []struct {
		name         string
		spec         corev1.PodSpec
		inUse        map[string][]string
		wantNode     string
		wantAffinity *corev1.Affinity
	}{
		{
			name:  "a claim not in use: the scheduler chooses",
			spec:  corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-web")}},
			inUse: map[string][]string{"other": {"node-b"}},
		},
		{
			name:         "a claim in use on one node",
			spec:         corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-web")}},
			inUse:        map[string][]string{"data-web": {"node-a", "node-a"}},
			wantNode:     "node-a",
			wantAffinity: onNode("node-a"),
		},
		{
			name:         "two claims in use on the same node, the template's pod affinity kept",
			spec:         corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-web"), claimVolume("target", "target")}, Affinity: &corev1.Affinity{PodAffinity: podAffinity}},
			inUse:        map[string][]string{"data-web": {"node-a"}, "target": {"node-a"}},
			wantNode:     "node-a",
			wantAffinity: &corev1.Affinity{PodAffinity: podAffinity, NodeAffinity: onNode("node-a").NodeAffinity},
		},
		{
			name:  "claims in use on two nodes: no node can mount both",
			spec:  corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-web"), claimVolume("target", "target")}},
			inUse: map[string][]string{"data-web": {"node-a"}, "target": {"node-b"}},
		},
		{
			name:  "the template's nodeSelector wins",
			spec:  corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-web")}, NodeSelector: map[string]string{"disk": "ssd"}},
			inUse: map[string][]string{"data-web": {"node-a"}},
		},
		{
			name:         "the template's node affinity wins",
			spec:         corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-web")}, Affinity: onNode("node-c")},
			inUse:        map[string][]string{"data-web": {"node-a"}},
			wantAffinity: onNode("node-c"),
		},
		{
			name:         "a node affinity with preferred terms only does not place the pod: the node is required, the preferences kept",
			spec:         corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-web")}, Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: preferred}}},
			inUse:        map[string][]string{"data-web": {"node-a"}},
			wantNode:     "node-a",
			wantAffinity: pinnedPreferring,
		},
		{
			name:  "the template's nodeName wins",
			spec:  corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-web")}, NodeName: "node-c"},
			inUse: map[string][]string{"data-web": {"node-a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tt.spec}
			if node := PlaceWithClaims(pod, tt.inUse); node != tt.wantNode {
				t.Errorf("PlaceWithClaims() = %q, want %q", node, tt.wantNode)
			}
			if !equality.Semantic.DeepEqual(pod.Spec.Affinity, tt.wantAffinity) {
				t.Errorf("affinity differs (-got +want):\n%s", diff.Diff(pod.Spec.Affinity, tt.wantAffinity))
			}
		})
	}
}

func TestClaimNames(t *testing.T) {
	emptyDir := corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		claimVolume("a", "data-web"), emptyDir, claimVolume("b", "target"), claimVolume("c", "data-web"),
	}}}
	if got, want := ClaimNames(pod), []string{"data-web", "target"}; !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("ClaimNames() = %q, want %q", got, want)
	}
}
