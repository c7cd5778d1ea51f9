package prometheus

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/oaat-io/oaat-operator/internal/groupspec"
)

// overdueFactorRE is the factor of OaatItemOverdue's threshold: oaat_item_overdue_seconds above N
// times the group's frequency.
var overdueFactorRE = regexp.MustCompile(`>\s*on\s*\(namespace, group\)\s*group_left\s*\(\)\s*(\d+)\s*\*\s*max by \(namespace, group\) \(oaat_group_frequency_seconds\)`)

// The alert and the operator's forecast (whose ItemLate warns before the alert fires) name the
// same instant: the factor written in the alert's expression is groupspec.OverdueAlertFactor.
func TestOverdueAlertFactorIsTheOperators(t *testing.T) {
	for _, r := range alertRules(t) {
		if r.Alert != "OaatItemOverdue" {
			continue
		}
		m := overdueFactorRE.FindStringSubmatch(r.Expr)
		if m == nil {
			t.Fatalf("OaatItemOverdue's expression has no threshold N * max by (namespace, group) (oaat_group_frequency_seconds):\n%s", r.Expr)
		}
		if n, _ := strconv.Atoi(m[1]); n != groupspec.OverdueAlertFactor {
			t.Errorf("OaatItemOverdue fires at %d frequencies past due, groupspec.OverdueAlertFactor (the forecast's ItemLate) says %d", n, groupspec.OverdueAlertFactor)
		}
		return
	}
	t.Fatal("no alert OaatItemOverdue in " + ruleManifest)
}
