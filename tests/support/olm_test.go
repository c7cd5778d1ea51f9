package support

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestInstallModeNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode InstallMode
		want []string
	}{
		{"all namespaces", InstallMode{InstallNamespace: "op", WorkNamespaces: []string{"w"}}, []string{"op", "w"}},
		{"own namespace, each once", InstallMode{InstallNamespace: "op", TargetNamespaces: []string{"op"}, WorkNamespaces: []string{"op"}, OutsideNamespace: "out"}, []string{"op", "out"}},
		{"multi, sorted", InstallMode{InstallNamespace: "z", TargetNamespaces: []string{"b", "a"}, WorkNamespaces: []string{"a", "b"}, OutsideNamespace: "c"}, []string{"a", "b", "c", "z"}},
	} {
		if got := tc.mode.Namespaces(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Namespaces() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseObject(t *testing.T) {
	u, err := ParseObject("kind: Namespace\nmetadata:\n  name: %s\n", "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if u.GetKind() != "Namespace" || u.GetName() != "team-a" {
		t.Errorf("got kind %q name %q", u.GetKind(), u.GetName())
	}
	if _, err := ParseObject("kind: [unclosed"); err == nil {
		t.Error("a malformed manifest was parsed")
	}
}

func TestInstallModeExpectedTargets(t *testing.T) {
	if got := (InstallMode{InstallNamespace: "op"}).ExpectedTargets(); !slices.Equal(got, []string{""}) {
		t.Errorf("all namespaces: %q", got)
	}
	if got := (InstallMode{TargetNamespaces: []string{"b", "a"}}).ExpectedTargets(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("two targets: %q", got)
	}
}

func TestInstallModes(t *testing.T) {
	modes := InstallModes("op", "w")
	var names []string
	for _, m := range modes {
		names = append(names, m.Name)
		if len(m.TargetNamespaces) > 0 && (m.OutsideNamespace == "") {
			t.Errorf("%s: no namespace outside its targets", m.Name)
		}
		if slices.Contains(m.TargetNamespaces, m.OutsideNamespace) {
			t.Errorf("%s: the outside namespace %s is a target", m.Name, m.OutsideNamespace)
		}
	}
	if !slices.Equal(names, []string{"AllNamespaces", "OwnNamespace", "SingleNamespace", "MultiNamespace"}) {
		t.Errorf("modes %v", names)
	}
	if own := modes[1]; !slices.Equal(own.TargetNamespaces, []string{own.InstallNamespace}) {
		t.Errorf("OwnNamespace targets %v, installed in %s", own.TargetNamespaces, own.InstallNamespace)
	}
	if single := modes[2]; len(single.TargetNamespaces) != 1 || single.TargetNamespaces[0] == single.InstallNamespace {
		t.Errorf("SingleNamespace targets %v, installed in %s", single.TargetNamespaces, single.InstallNamespace)
	}
	if multi := modes[3]; len(multi.TargetNamespaces) != 2 {
		t.Errorf("MultiNamespace targets %v", multi.TargetNamespaces)
	}
	seen := map[string]string{}
	for _, m := range modes {
		for _, ns := range m.Namespaces() {
			if other, ok := seen[ns]; ok {
				t.Errorf("namespace %s used by %s and %s", ns, other, m.Name)
			}
			seen[ns] = m.Name
		}
	}
}

func TestOperatorGroupAndSubscriptionObjects(t *testing.T) {
	og := OperatorGroup("oaat", "ns", []string{"a", "b"})
	targets, found, err := unstructured.NestedStringSlice(og.Object, "spec", "targetNamespaces")
	if err != nil || !found || strings.Join(targets, ",") != "a,b" {
		t.Errorf("targetNamespaces %v (found %v, %v)", targets, found, err)
	}
	if all := OperatorGroup("oaat", "ns", nil); len(all.Object["spec"].(map[string]any)) != 0 {
		t.Errorf("an OperatorGroup of all namespaces has spec %v", all.Object["spec"])
	}
	sub := Subscription{Name: "s", Namespace: "ns", Package: "p", Channel: "alpha", CatalogSource: "c", CatalogNamespace: "olm", StartingCSV: "p.v0.1.0"}.Object()
	for field, want := range map[string]string{"channel": "alpha", "name": "p", "source": "c", "sourceNamespace": "olm", "installPlanApproval": "Automatic", "startingCSV": "p.v0.1.0"} {
		if got, _, _ := unstructured.NestedString(sub.Object, "spec", field); got != want {
			t.Errorf("spec.%s = %q, want %q", field, got, want)
		}
	}
	if _, found, _ := unstructured.NestedString(Subscription{Name: "s"}.Object().Object, "spec", "startingCSV"); found {
		t.Error("startingCSV set without StartingCSV")
	}
}

// TestOwnedCRDs keeps the suites' list of the bundle's CRDs equal to the CRDs controller-gen
// writes: a kind added to the API without it made the OLM install suite fail only on a cluster.
func TestOwnedCRDs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		group, plural, ok := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".yaml"), "_")
		if !ok {
			t.Fatalf("%s: not named <group>_<plural>.yaml", f)
		}
		want = append(want, plural+"."+group)
	}
	if len(want) == 0 {
		t.Fatal("no CRD in config/crd/bases")
	}
	slices.Sort(want)
	if !slices.Equal(OwnedCRDs, want) {
		t.Errorf("OwnedCRDs = %v, config/crd/bases has %v", OwnedCRDs, want)
	}
}
