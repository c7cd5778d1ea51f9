package support

import (
	"strings"
	"testing"
)

func TestScrapeConfigQuotesAndSortsLabels(t *testing.T) {
	got := scrapeConfig(ScrapeJob{
		Name:    "svc",
		Targets: []string{"10.0.0.5:8443"},
		Labels:  map[string]string{"service": "svc", "a": `x"y`},
	}, "/tmp/t")
	for _, want := range []string{
		`- job_name: "svc"`,
		`credentials_file: "/tmp/t"`,
		`- targets: ["10.0.0.5:8443"]`,
		"      a: \"x\\\"y\"\n      service: \"svc\"\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("config lacks %q:\n%s", want, got)
		}
	}
}
