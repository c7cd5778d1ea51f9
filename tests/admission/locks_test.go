package admission

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testLocks sends OaatLocks with spec.adaptive, valid and invalid, and checks the refusals say
// which field and why, and the min the API server writes into those it admits (1 when absent).
func testLocks(t *testing.T, c client.Client) {
	t.Helper()
	for i, tt := range []struct {
		name     string
		adaptive map[string]any
		messages []string
		min      int64 // of an admitted lock, as admitted
	}{
		{name: "min and max", adaptive: map[string]any{"min": 2, "max": 6}, min: 2},
		{name: "max alone: min 1", adaptive: map[string]any{"max": 1}, min: 1},
		{name: "min over max", adaptive: map[string]any{"min": 5, "max": 4}, messages: []string{"spec.adaptive.min is over spec.adaptive.max"}},
		{name: "no max", adaptive: map[string]any{"min": 2}, messages: []string{"spec.adaptive.max: Required value"}},
		{name: "max 0", adaptive: map[string]any{"max": 0}, messages: []string{"spec.adaptive.max"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "oaat.io/v1alpha1", "kind": "OaatLock",
				"metadata": map[string]any{"name": fmt.Sprintf("lock-%d", i), "namespace": "default"},
				"spec":     map[string]any{"capacity": 4, "adaptive": tt.adaptive},
			}}
			expectAnswer(t, dryRun(t.Context(), c, obj), tt.messages)
			if got, _, _ := unstructured.NestedInt64(obj.Object, "spec", "adaptive", "min"); len(tt.messages) == 0 && got != tt.min {
				t.Errorf("admitted with spec.adaptive.min %d, want %d", got, tt.min)
			}
		})
	}
}
