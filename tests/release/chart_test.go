//go:build release

package release

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// chartNamespace is the namespace install.yaml installs into; the chart is rendered into it, so
// that the two compare.
const chartNamespace = "oaat-operator-system"

// rendered are the objects of a manifest by kind/name, and the text of each as written.
type rendered struct {
	objects map[string]map[string]any
	texts   map[string]string
}

// parseManifest reads a multi-document manifest (helm template's, with its "# Source:" lines).
func parseManifest(t *testing.T, data string) rendered {
	t.Helper()
	r := rendered{objects: map[string]map[string]any{}, texts: map[string]string{}}
	for _, doc := range strings.Split("\n"+data, "\n---\n") {
		doc = strings.TrimPrefix(doc, "\n")
		if source, rest, ok := strings.Cut(doc, "\n"); ok && strings.HasPrefix(source, "# Source: ") {
			doc = rest
		}
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("reading %q: %v", doc, err)
		}
		if o == nil {
			continue
		}
		kind, _ := o["kind"].(string)
		name, _ := o["metadata"].(map[string]any)["name"].(string)
		key := kind + "/" + name
		if _, dup := r.objects[key]; dup {
			t.Fatalf("%s twice", key)
		}
		r.objects[key], r.texts[key] = o, doc
	}
	return r
}

func (r rendered) keys() []string { return slices.Sorted(maps.Keys(r.objects)) }

func (r released) chartArchive() string {
	return filepath.Join(r.dist, "oaat-operator-"+r.version+".tgz")
}

// helm runs the Helm the Makefile built (HELM) with args; it returns its output and error.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("HELM")
	if bin == "" {
		t.Fatal("HELM is not set: run this test with make test-release")
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

// template renders the chart into chartNamespace with the values files and flags given.
func (r released) template(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return helm(t, append([]string{"template", "oaat-operator", r.chartArchive(), "--namespace", chartNamespace, "--include-crds"}, args...)...)
}

// installObjects are the objects of the release's install.yaml, less its Namespace (the chart
// installs into the release's namespace, which the user creates), and managed by Helm.
func (r released) installObjects(t *testing.T) rendered {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(r.dist, "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	install := parseManifest(t, string(raw))
	if _, ok := install.objects["Namespace/"+chartNamespace]; !ok {
		t.Fatalf("install.yaml has no Namespace %s", chartNamespace)
	}
	delete(install.objects, "Namespace/"+chartNamespace)
	for _, o := range install.objects {
		labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
		if labels["app.kubernetes.io/managed-by"] == "kustomize" {
			labels["app.kubernetes.io/managed-by"] = "Helm"
		}
	}
	return install
}

// manager is the manager container of the Deployment of objects.
func manager(t *testing.T, objects rendered) map[string]any {
	t.Helper()
	d := objects.objects["Deployment/oaat-operator-controller-manager"]
	containers := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	for _, c := range containers {
		if c.(map[string]any)["name"] == "manager" {
			return c.(map[string]any)
		}
	}
	t.Fatal("no manager container")
	return nil
}

// compareObjects fails on each object of want that got lacks or has otherwise, and each extra one.
func compareObjects(t *testing.T, what string, got, want rendered) {
	t.Helper()
	if !slices.Equal(got.keys(), want.keys()) {
		t.Errorf("%s: the objects\n%v\nwant\n%v", what, got.keys(), want.keys())
	}
	for key, w := range want.objects {
		if g, ok := got.objects[key]; ok && !reflect.DeepEqual(g, w) {
			gy, _ := yaml.Marshal(g)
			wy, _ := yaml.Marshal(w)
			t.Errorf("%s: %s is\n%s\nwant\n%s", what, key, gy, wy)
		}
	}
}

// checkChart lints the release's chart and renders it: with the default values it is install.yaml
// (its CRDs byte for byte) but for the Namespace and the managed-by label; each value changes only
// its fields; values out of bounds are refused with their name.
func (r released) checkChart(t *testing.T) {
	out, err := helm(t, "lint", "--strict", r.chartArchive())
	if err != nil || !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") || strings.Contains(out, "[WARNING]") {
		t.Fatalf("helm lint --strict: %v\n%s", err, out)
	}
	install := r.installObjects(t)

	t.Run("the default values render install.yaml", func(t *testing.T) {
		out, err := r.template(t)
		if err != nil {
			t.Fatalf("helm template: %v\n%s", err, out)
		}
		got := parseManifest(t, out)
		compareObjects(t, "the default values", got, install)
		crds := 0
		for key, text := range install.texts {
			if strings.HasPrefix(key, "CustomResourceDefinition/") {
				crds++
				// (The newline that ends a document is the separator's in one file, not the other.)
				if strings.TrimRight(got.texts[key], "\n") != strings.TrimRight(text, "\n") {
					t.Errorf("the chart's %s is not install.yaml's byte for byte", key)
				}
			}
		}
		if crds != 6 {
			t.Errorf("install.yaml has %d CRDs, want 6", crds)
		}
	})

	t.Run("each value changes its own fields", func(t *testing.T) {
		values := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(values, []byte(`replicaCount: 3
image:
  repository: registry.example/oaat
  digest: ""
  tag: v9.9.9
resources:
  requests: {cpu: 10m, memory: 64Mi}
watchNamespaces: [backups, media]
metrics:
  serviceMonitor: {enabled: true}
prometheusRule: {enabled: true}
`), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := r.template(t, "--values", values)
		if err != nil {
			t.Fatalf("helm template: %v\n%s", err, out)
		}
		got := parseManifest(t, out)
		want := r.installObjects(t)
		want.objects["Deployment/oaat-operator-controller-manager"]["spec"].(map[string]any)["replicas"] = float64(3)
		m := manager(t, want)
		m["image"] = "registry.example/oaat:v9.9.9"
		// Helm merges the values into the defaults: the requests set, the default limits kept.
		m["resources"].(map[string]any)["requests"] = map[string]any{"cpu": "10m", "memory": "64Mi"}
		for _, e := range m["env"].([]any) {
			if e := e.(map[string]any); e["name"] == "WATCH_NAMESPACE" {
				delete(e, "valueFrom")
				e["value"] = "backups,media"
			}
		}
		for _, key := range []string{"ServiceMonitor/oaat-operator-controller-manager-metrics-monitor", "PrometheusRule/oaat-operator-controller-manager-alerts"} {
			o, ok := got.objects[key]
			if !ok {
				t.Fatalf("no %s with its value on", key)
			}
			want.objects[key] = o
		}
		compareObjects(t, "the values set", got, want)

		// The alerts' rules are config/prometheus's, Prometheus' {{ $labels }} braces kept.
		rules, err := os.ReadFile(filepath.Join(r.root, "config", "prometheus", "alerts.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var source map[string]any
		if err := yaml.Unmarshal(rules, &source); err != nil {
			t.Fatal(err)
		}
		if rule := got.objects["PrometheusRule/oaat-operator-controller-manager-alerts"]; !reflect.DeepEqual(rule["spec"], source["spec"]) {
			t.Errorf("the chart's PrometheusRule's spec is not config/prometheus/alerts.yaml's")
		}

		for set, gone := range map[string]string{
			// One replica and a PodDisruptionBudget of minAvailable 1: no node could be drained.
			"replicaCount=1":                "PodDisruptionBudget/oaat-operator-controller-manager",
			"metrics.service.enabled=false": "Service/oaat-operator-controller-manager-metrics-service",
		} {
			out, err := r.template(t, "--set", set)
			if err != nil {
				t.Fatalf("helm template --set %s: %v\n%s", set, err, out)
			}
			want := r.installObjects(t)
			delete(want.objects, gone)
			if set == "replicaCount=1" {
				want.objects["Deployment/oaat-operator-controller-manager"]["spec"].(map[string]any)["replicas"] = float64(1)
			}
			compareObjects(t, "--set "+set, parseManifest(t, out), want)
		}
	})

	t.Run("values out of bounds are refused by name", func(t *testing.T) {
		for _, c := range []struct{ set, want string }{
			{"replicaCount=0", "replicaCount"},
			{"watchNamespaces={Backups}", "watchNamespaces"},
			{"image.digest=latest", "digest"},
			{"replicas=2", "replicas"},
			{"metrics.service.enabled=false,metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.enabled needs metrics.service.enabled"},
		} {
			out, err := r.template(t, "--set", c.set)
			if err == nil || !strings.Contains(out, c.want) {
				t.Errorf("helm template --set %s: %v, want an error naming %q:\n%s", c.set, err, c.want, out)
			}
		}
	})
}
