package prometheus

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/oaat-io/oaat-operator/internal/runstats"
)

// The alerts on a finished run and the operator's condition UnusualRuns (internal/runstats) call
// the same runs unusual: the factors written in the alerts' expressions are runstats.LongFactor
// and runstats.ShortFactor.
func TestUnusualRunFactorsAreTheOperators(t *testing.T) {
	for alert, want := range map[string]struct {
		re     *regexp.Regexp
		factor float64
	}{
		"OaatItemRunTooLong":  {regexp.MustCompile(`\(oaat_item_last_run_duration_ratio\)\s*>\s*([0-9.]+)`), runstats.LongFactor},
		"OaatItemRunTooShort": {regexp.MustCompile(`\(oaat_item_last_run_duration_ratio\)\s*<\s*([0-9.]+)`), runstats.ShortFactor},
	} {
		found := false
		for _, r := range alertRules(t) {
			if r.Alert != alert {
				continue
			}
			found = true
			m := want.re.FindStringSubmatch(r.Expr)
			if m == nil {
				t.Errorf("%s's expression has no threshold on oaat_item_last_run_duration_ratio (%s):\n%s", alert, want.re, r.Expr)
				continue
			}
			if got, _ := strconv.ParseFloat(m[1], 64); got != want.factor {
				t.Errorf("%s fires at a ratio of %v, the operator's condition UnusualRuns at %v", alert, got, want.factor)
			}
		}
		if !found {
			t.Errorf("no alert %s in %s", alert, ruleManifest)
		}
	}
}
