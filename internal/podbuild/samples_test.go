package podbuild

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// shells are the programs whose -c argument is a script: an item inside it would be code.
var shells = []string{"sh", "bash", "ash", "dash", "ksh", "zsh"}

// sampleTypes reads the OaatTypes of config/samples.
func sampleTypes(t *testing.T) map[string]v1alpha1.OaatType {
	t.Helper()
	files, err := filepath.Glob("../../config/samples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in config/samples: %v", err)
	}
	types := map[string]v1alpha1.OaatType{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			var typ v1alpha1.OaatType
			if err := yaml.Unmarshal(doc, &typ); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if typ.Kind == "OaatType" {
				types[filepath.Base(file)+"/"+typ.Name] = typ
			}
		}
	}
	if len(types) == 0 {
		t.Fatal("no OaatType among the samples")
	}
	return types
}

// TestSampleTypesNeverRunTheItem builds the pod of each sample OaatType for an item that is a
// command substitution, applies the kubelet's $(VAR) expansion, and checks that the item reaches
// the containers only as data: the env value OAAT_ITEM, or a whole argv element; never inside the
// script of a shell's -c, where the shell would run it.
//
// A type that substitutes the item into a claimName refuses that item (CheckItem: no claim name
// holds $, ( or /): it never reaches a pod. Its containers are then checked with an item that is
// a claim name, which must not reach a shell's script either.
func TestSampleTypesNeverRunTheItem(t *testing.T) {
	for name, typ := range sampleTypes(t) {
		t.Run(name, func(t *testing.T) {
			item := "$(touch /tmp/p)"
			if err := CheckItem(&typ.Spec.Template, item); err != nil {
				if _, buildErr := Build(Input{Group: testGroup(), Template: typ.Spec.Template, Item: item, Run: 1}); buildErr == nil {
					t.Fatalf("CheckItem refuses %q (%v) but Build makes its pod", item, err)
				}
				item = "data-web"
			}
			pod, err := Build(Input{Group: testGroup(), Template: typ.Spec.Template, Item: item, Run: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
				c := expandContainer(c)
				argv := append(slices.Clone(c.Command), c.Args...)
				t.Logf("container %s: argv %q, env %s=%q", c.Name, argv, v1alpha1.EnvItem, envVar(t, c, v1alpha1.EnvItem).Value)
				if got := envVar(t, c, v1alpha1.EnvItem).Value; got != item {
					t.Errorf("container %s: %s = %q after the kubelet's expansion, want the item %q", c.Name, v1alpha1.EnvItem, got, item)
				}
				for i, arg := range argv {
					if arg != item && strings.Contains(arg, item) {
						t.Errorf("container %s: argv[%d] %q holds the item inside a string: pass it as \"$%s\" or a whole argument",
							c.Name, i, arg, v1alpha1.EnvItem)
					}
				}
				if len(argv) > 0 && slices.Contains(shells, path.Base(argv[0])) {
					if i := slices.Index(argv, "-c"); i >= 0 && i+1 < len(argv) && strings.Contains(argv[i+1], item) {
						t.Errorf("container %s: the shell script %q contains the item: the shell runs it", c.Name, argv[i+1])
					}
				}
			}
		})
	}
}
