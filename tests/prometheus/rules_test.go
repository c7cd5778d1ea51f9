// Package prometheus checks the PrometheusRule of config/prometheus with promtool: the rules
// parse, and the unit tests of alerts_test.yaml show each alert firing and staying silent.
package prometheus

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/tests/support"
)

const ruleManifest = "../../config/prometheus/alerts.yaml"

// promtool is the promtool binary: $PROMTOOL, else promtool on PATH (Debian's prometheus
// package; .ci/run installs it).
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not found: install Debian's prometheus package (apt-get install prometheus) or set PROMTOOL")
	}
	return p
}

// rulesDir writes the PrometheusRule's spec (a Prometheus rule file) and the rule tests into a
// temporary directory.
func rulesDir(t *testing.T) string {
	t.Helper()
	manifest, err := os.ReadFile(ruleManifest)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := support.RuleGroups(manifest)
	if err != nil {
		t.Fatalf("%s: %v", ruleManifest, err)
	}
	rules, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("alerts_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range map[string][]byte{"rules.yaml": rules, "alerts_test.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	dir := rulesDir(t)
	for _, args := range [][]string{
		{"check", "rules", filepath.Join(dir, "rules.yaml")},
		{"test", "rules", filepath.Join(dir, "alerts_test.yaml")},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		t.Logf("promtool %v:\n%s", args[:2], out)
		if err != nil {
			t.Fatalf("promtool %v failed: %v", args[:2], err)
		}
	}
}
