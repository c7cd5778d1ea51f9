package prometheus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// runbookBase is where the alerts' runbook_url point: docs/runbooks of the repository's main branch.
const runbookBase = "https://github.com/oaat-io/oaat-operator/blob/main/docs/runbooks/"

// alertRule is an alerting rule of the PrometheusRule.
type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func alertRules(t *testing.T) []alertRule {
	t.Helper()
	manifest, err := os.ReadFile(ruleManifest)
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []alertRule `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(manifest, &rule); err != nil {
		t.Fatal(err)
	}
	var alerts []alertRule
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				alerts = append(alerts, r)
			}
		}
	}
	if len(alerts) == 0 {
		t.Fatalf("no alerting rule in %s", ruleManifest)
	}
	return alerts
}

// TestEveryAlertHasARunbook checks that each alert links a page of docs/runbooks that exists, is
// about that alert and says what it means, how to confirm it and how to fix it; and that the
// severity is critical for the operator being down, warning otherwise.
func TestEveryAlertHasARunbook(t *testing.T) {
	for _, a := range alertRules(t) {
		url := a.Annotations["runbook_url"]
		page, ok := strings.CutPrefix(url, runbookBase)
		if !ok {
			t.Errorf("%s: runbook_url %q is not under %s", a.Alert, url, runbookBase)
			continue
		}
		data, err := os.ReadFile(filepath.Join("..", "..", "docs", "runbooks", page))
		if err != nil {
			t.Errorf("%s: its runbook: %v", a.Alert, err)
			continue
		}
		text := string(data)
		if !strings.HasPrefix(text, "# "+a.Alert+"\n") {
			t.Errorf("%s: %s does not start with the alert's name as its title", a.Alert, page)
		}
		for _, section := range []string{"## Meaning", "## Confirm", "## Fix"} {
			if !strings.Contains(text, "\n"+section+"\n") {
				t.Errorf("%s: %s has no section %q", a.Alert, page, section)
			}
		}
		if !strings.Contains(text, "```promql\n") || !strings.Contains(text, "```sh\n") {
			t.Errorf("%s: %s confirms with neither kubectl (a sh block) nor PromQL (a promql block)", a.Alert, page)
		}
		want := "warning"
		if a.Alert == "OaatOperatorDown" {
			want = "critical"
		}
		if a.Labels["severity"] != want {
			t.Errorf("%s: severity %q, want %q", a.Alert, a.Labels["severity"], want)
		}
	}
}
