package locks

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestAddPeer: another group's current run takes a slot, but that of a group being deleted whose
// pod has ended: such a group records no run, so its currentRun outlives its pod.
func TestAddPeer(t *testing.T) {
	nas := []string{"nas"}
	deleting := func(g v1alpha1.OaatGroup) *v1alpha1.OaatGroup {
		g.DeletionTimestamp = &metav1.Time{Time: t0}
		return &g
	}
	running := group("r", nas, "r-x-1", nil)
	tests := []struct {
		name     string
		peer     *v1alpha1.OaatGroup
		runEnded bool
		want     []string
	}{
		{name: "a running group", peer: &running, want: []string{"r-x-1"}},
		{name: "a running group: runEnded concerns only groups being deleted", peer: &running, runEnded: true, want: []string{"r-x-1"}},
		{name: "a deleting group whose pod is live", peer: deleting(running), want: []string{"r-x-1"}},
		{name: "a deleting group whose pod has ended", peer: deleting(running), runEnded: true, want: nil},
	}
	for _, tt := range tests {
		in := Input{}
		in.AddPeer(tt.peer, tt.runEnded)
		var got []string
		for _, r := range in.Runners {
			got = append(got, r.Pod)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: runners %v, want %v", tt.name, got, tt.want)
		}
	}
}
