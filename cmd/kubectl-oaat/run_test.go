package main

import (
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// createdLine is what `run` prints for the OaatRun it created, generated from the group's name.
var createdLine = regexp.MustCompile(`^oaatrun\.oaat\.io/(backups-[a-z0-9]{5}) created\n`)

func TestRunCreatesOaatRun(t *testing.T) {
	tests := []struct {
		name        string
		flags       []string
		wantIgnore  bool
		wantTTL     v1alpha1.Duration
		wantWarning string
	}{
		{name: "defaults", wantTTL: "1h"},
		{name: "every flag", flags: []string{"--ignore-blackout-windows", "--ttl", "10m"}, wantIgnore: true, wantTTL: "10m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			newGroup(t, ns, "backups", "item1", "/srv/photos")

			stdout, stderr, err := kubectlOaat(t.Context(), ns, append([]string{"run", "backups", "/srv/photos"}, tt.flags...)...)
			t.Logf("stdout:\n%s", stdout)
			if err != nil {
				t.Fatalf("run: %v (stderr %q)", err, stderr)
			}
			if stderr != "" {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
			m := createdLine.FindStringSubmatch(stdout)
			if len(m) == 0 || len(stdout) != len(m[0]) {
				t.Fatalf("stdout = %q, want one line matching %s", stdout, createdLine)
			}
			runs := listRuns(t, ns)
			if len(runs) != 1 || runs[0].Name != m[1] {
				t.Fatalf("OaatRuns in the namespace: %+v, want only %s", runs, m[1])
			}
			want := v1alpha1.OaatRunSpec{OaatGroup: "backups", Item: "/srv/photos", IgnoreBlackoutWindows: tt.wantIgnore, TTLAfterFinished: tt.wantTTL}
			if runs[0].Spec != want {
				t.Errorf("spec = %+v, want %+v", runs[0].Spec, want)
			}
		})
	}
}

func TestRunWarnsAboutAnUnknownItem(t *testing.T) {
	tests := []struct {
		name        string
		statusItems []v1alpha1.ItemStatus
		wantWarning bool
	}{
		{name: "nowhere", wantWarning: true},
		{name: "read from a ConfigMap", statusItems: []v1alpha1.ItemStatus{{Name: "from-a-configmap"}}},
		{name: "removed from its ConfigMap", statusItems: []v1alpha1.ItemStatus{{Name: "from-a-configmap", WaitReason: v1alpha1.WaitRemoved}}, wantWarning: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			g := newGroup(t, ns, "backups", "item1")
			base := g.DeepCopy()
			g.Status.Items = tt.statusItems
			if err := k8sClient.Status().Patch(t.Context(), g, client.MergeFrom(base)); err != nil {
				t.Fatal(err)
			}

			stdout, stderr, err := kubectlOaat(t.Context(), ns, "run", "backups", "from-a-configmap")
			t.Logf("stdout:\n%sstderr:\n%s", stdout, stderr)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if !createdLine.MatchString(stdout) {
				t.Errorf("stdout = %q, want a created line", stdout)
			}
			want := ""
			if tt.wantWarning {
				want = `Warning: OaatGroup "backups" has no item "from-a-configmap" (in spec.oaatItems, or in status.items as the operator last read its ConfigMaps): ` +
					"unless it was just added, the operator rejects the OaatRun (UnknownItem)\n"
			}
			if stderr != want {
				t.Errorf("stderr = %q, want %q", stderr, want)
			}
			if runs := listRuns(t, ns); len(runs) != 1 || runs[0].Spec.Item != "from-a-configmap" {
				t.Errorf("OaatRuns in the namespace: %+v, want one for the item", runs)
			}
		})
	}
}

func TestRunRefusesWithoutCreating(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "missing group", args: []string{"run", "nope", "item1"},
			wantErr: `OaatGroup "nope" not found in namespace "`},
		{name: "bad ttl", args: []string{"run", "backups", "item1", "--ttl", "5x"},
			wantErr: `--ttl: invalid duration "5x"`},
		{name: "timeout without wait", args: []string{"run", "backups", "item1", "--timeout", "1m"},
			wantErr: `--timeout applies to --wait only`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			newGroup(t, ns, "backups", "item1")

			stdout, stderr, err := kubectlOaat(t.Context(), ns, tt.args...)
			t.Logf("stderr:\n%s", stderr)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
			if !strings.Contains(stderr, "Error: "+err.Error()) {
				t.Errorf("stderr = %q, want the error", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if runs := listRuns(t, ns); len(runs) != 0 {
				t.Errorf("OaatRuns were created: %+v", runs)
			}
		})
	}
}
