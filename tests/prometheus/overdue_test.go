package prometheus

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/internal/groupspec"
)

// overdueFactorRE is the factor of OaatItemOverdue's threshold: oaat_item_overdue_seconds above N
// times the group's frequency.
var overdueFactorRE = regexp.MustCompile(`>\s*on\s*\(namespace, group\)\s*group_left\s*\(\)\s*(\d+)\s*\*\s*max by \(namespace, group\) \(oaat_group_frequency_seconds\)`)

// The alert and the operator's forecast (whose ItemLate warns before the alert fires) name the
// same instant: the factor written in the alert's expression is groupspec.OverdueAlertFactor.
func TestOverdueAlertFactorIsTheOperators(t *testing.T) {
	manifest, err := os.ReadFile(ruleManifest)
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(manifest, &rule); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "OaatItemOverdue" {
				continue
			}
			found = true
			m := overdueFactorRE.FindStringSubmatch(r.Expr)
			if m == nil {
				t.Fatalf("OaatItemOverdue's expression has no threshold N * max by (namespace, group) (oaat_group_frequency_seconds):\n%s", r.Expr)
			}
			if n, _ := strconv.Atoi(m[1]); n != groupspec.OverdueAlertFactor {
				t.Errorf("OaatItemOverdue fires at %d frequencies past due, groupspec.OverdueAlertFactor (the forecast's ItemLate) says %d", n, groupspec.OverdueAlertFactor)
			}
		}
	}
	if !found {
		t.Fatal("no alert OaatItemOverdue in " + ruleManifest)
	}
}
