package controllers

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestWatchNamespaces(t *testing.T) {
	tests := map[string][]string{
		"":          nil,
		"team-a":    {"team-a"},
		"a,b":       {"a", "b"},
		" a , ,b, ": {"a", "b"},
		",":         nil,
	}
	for value, want := range tests {
		if got := WatchNamespaces(value); !slices.Equal(got, want) {
			t.Errorf("WatchNamespaces(%q) = %q, want %q", value, got, want)
		}
	}
}

func TestCacheOptionsNamespaces(t *testing.T) {
	if opts := CacheOptions(); opts.DefaultNamespaces != nil {
		t.Errorf("no namespaces: DefaultNamespaces = %v, want all (nil)", opts.DefaultNamespaces)
	}
	opts := CacheOptions("a", "b")
	if len(opts.DefaultNamespaces) != 2 {
		t.Errorf("DefaultNamespaces = %v, want a and b", opts.DefaultNamespaces)
	}
	for _, ns := range []string{"a", "b"} {
		if _, ok := opts.DefaultNamespaces[ns]; !ok {
			t.Errorf("DefaultNamespaces lacks %q", ns)
		}
	}
}

func TestCacheOptionsWatchOnlyItemSourceConfigMaps(t *testing.T) {
	for obj, byObject := range CacheOptions().ByObject {
		if meta, ok := obj.(*metav1.PartialObjectMetadata); ok && meta.Kind == "ConfigMap" {
			if got, want := byObject.Label.String(), "oaat.io/item-source=true"; got != want {
				t.Fatalf("ConfigMap metadata selector = %q, want %q", got, want)
			}
			return
		}
	}
	t.Fatal("no cache selector for the ConfigMaps' metadata: the cache holds every ConfigMap's metadata")
}

func TestTrimPod(t *testing.T) {
	pod := builders.Pod("p").OfGroup("g").Phase(corev1.PodSucceeded).Obj()
	pod.Labels["a"] = "b"
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	got, err := trimPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	// What the cache keeps: no spec, no managedFields, only the operator's labels.
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "p", Labels: map[string]string{v1alpha1.LabelGroup: "g"}},
		Status:     corev1.PodStatus{Phase: corev1.PodSucceeded},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("trimmed pod (-want +got):\n%s", diff)
	}
	tombstone := "not a pod"
	if got, err := trimPod(tombstone); err != nil || got != tombstone {
		t.Fatalf("trimPod(tombstone) = %v, %v", got, err)
	}
}
