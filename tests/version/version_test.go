// Package version checks that the version a release says is one: the label
// app.kubernetes.io/version of the manager's Deployment and pods, in the kustomize configuration
// and in the bundle's CSV, is the Makefile's VERSION, and a manager built as make builds it says
// that version and its commit.
package version

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// checkLabels fails unless labels carry the manager's name, control-plane and version labels, the
// version being want: kubectl oaat version finds the Deployment by the first two and reads the
// third.
func checkLabels(t *testing.T, where string, labels map[string]string, want string) {
	t.Helper()
	for key, value := range map[string]string{
		v1alpha1.LabelName:         v1alpha1.NameValue,
		v1alpha1.LabelControlPlane: v1alpha1.ControlPlaneValue,
		v1alpha1.LabelVersion:      want,
	} {
		if labels[key] != value {
			t.Errorf("%s: label %s is %q, want %q (run make bundle)", where, key, labels[key], value)
		}
	}
}

func TestKustomizeDeploymentVersion(t *testing.T) {
	t.Parallel()
	want, err := support.MakefileVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	resmap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "config", "default"))
	if err != nil {
		t.Fatalf("kustomize build config/default: %v", err)
	}
	out, err := resmap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		var d appsv1.Deployment
		if err := yaml.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		if d.Kind != "Deployment" {
			continue
		}
		found++
		checkLabels(t, "config/default's Deployment "+d.Name, d.Labels, want)
		checkLabels(t, "config/default's Deployment "+d.Name+" pod template", d.Spec.Template.Labels, want)
	}
	if found != 1 {
		t.Errorf("config/default has %d Deployments, want the manager's", found)
	}
}

// csv is the part of the bundle's ClusterServiceVersion this test reads.
type csv struct {
	Spec struct {
		Version string `json:"version"`
		Install struct {
			Spec struct {
				Deployments []struct {
					Name  string                `json:"name"`
					Label map[string]string     `json:"label"`
					Spec  appsv1.DeploymentSpec `json:"spec"`
				} `json:"deployments"`
			} `json:"spec"`
		} `json:"install"`
	} `json:"spec"`
}

func TestBundleDeploymentVersion(t *testing.T) {
	t.Parallel()
	want, err := support.MakefileVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "bundle", "manifests", "oaat-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c csv
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if c.Spec.Version != want {
		t.Errorf("the CSV's spec.version is %q, want %q (run make bundle)", c.Spec.Version, want)
	}
	if len(c.Spec.Install.Spec.Deployments) != 1 {
		t.Fatalf("the CSV has %d Deployments, want the manager's", len(c.Spec.Install.Spec.Deployments))
	}
	d := c.Spec.Install.Spec.Deployments[0]
	checkLabels(t, "the CSV's Deployment "+d.Name, d.Label, want)
	checkLabels(t, "the CSV's Deployment "+d.Name+" pod template", d.Spec.Template.Labels, want)
}

// A manager built with make's VERSION_LDFLAGS says the Makefile's version, the commit and the Go
// version, and exits 0.
func TestManagerVersionFlag(t *testing.T) {
	t.Parallel()
	want, err := support.MakefileVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	ldflags, err := support.VersionLDFlags(root)
	if err != nil {
		t.Fatal(err)
	}
	manager := filepath.Join(t.TempDir(), "manager")
	build := exec.CommandContext(t.Context(), "go", "build", "-ldflags", ldflags, "-o", manager, "./cmd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(t.Context(), manager, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("manager --version: %v\n%s", err, out)
	}
	revision, err := exec.CommandContext(t.Context(), "git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	line := "oaat-operator manager " + want + " (revision " + string(bytes.TrimSpace(revision)) + ", " + runtime.Version() + ")\n"
	if string(out) != line {
		t.Errorf("manager --version printed %q, want %q", out, line)
	}
}
