package main

import (
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestUnpark: unpark creates an OaatRun of a parked item as run does, leaves an item that is not
// parked alone (saying so), and refuses an item the group does not have.
func TestUnpark(t *testing.T) {
	tests := []struct {
		name       string
		item       string
		wait       v1alpha1.WaitReason
		wantRun    bool
		wantStdout string // without a run: the whole stdout
		wantErr    string
	}{
		{name: "parked", item: "item1", wait: v1alpha1.WaitParked, wantRun: true},
		{name: "cooling off", item: "item1", wait: v1alpha1.WaitCoolingOff, wantStdout: "item \"item1\" of OaatGroup \"backups\" is not parked\n"},
		{name: "unknown item", item: "item9", wait: v1alpha1.WaitParked, wantErr: `OaatGroup "backups" has no item "item9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			g := newGroup(t, ns, "backups", "item1", "item2")
			base := g.DeepCopy()
			g.Status.Items = []v1alpha1.ItemStatus{{Name: "item1", FailureCount: 3, WaitReason: tt.wait}, {Name: "item2"}}
			if err := k8sClient.Status().Patch(t.Context(), g, client.MergeFrom(base)); err != nil {
				t.Fatal(err)
			}

			stdout, stderr, err := kubectlOaat(t.Context(), ns, "unpark", "backups", tt.item, "--ttl", "10m")
			t.Logf("stdout:\n%sstderr:\n%s", stdout, stderr)
			runs := listRuns(t, ns)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(stderr+err.Error(), tt.wantErr) || len(runs) != 0 {
					t.Fatalf("err %v, stderr %q, %d OaatRuns; want an error naming %q and no OaatRun", err, stderr, len(runs), tt.wantErr)
				}
			case tt.wantRun:
				m := createdLine.FindStringSubmatch(stdout)
				if err != nil || len(m) == 0 || len(runs) != 1 || runs[0].Name != m[1] {
					t.Fatalf("err %v, stdout %q, OaatRuns %+v; want one OaatRun, named", err, stdout, runs)
				}
				want := v1alpha1.OaatRunSpec{OaatGroup: "backups", Item: tt.item, TTLAfterFinished: "10m"}
				if runs[0].Spec != want {
					t.Errorf("spec = %+v, want %+v", runs[0].Spec, want)
				}
			default:
				if err != nil || stdout != tt.wantStdout || len(runs) != 0 {
					t.Fatalf("err %v, stdout %q, %d OaatRuns; want %q and no OaatRun", err, stdout, len(runs), tt.wantStdout)
				}
			}
		})
	}
}
