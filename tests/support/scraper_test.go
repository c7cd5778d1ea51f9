package support

import (
	"os"
	"os/exec"
	"path/filepath"
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

// A job without labels has no labels key, and the configuration is one promtool accepts (with a
// labelled job too).
func TestScrapeConfigIsValidForPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool (Debian's prometheus package, make system-packages): %v", err)
	}
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("t"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, job := range map[string]ScrapeJob{
		"plain":    {Name: "svc", Targets: []string{"127.0.0.1:8443"}},
		"labelled": {Name: "svc", Targets: []string{"10.0.0.5:8443"}, Labels: map[string]string{"service": "svc"}},
	} {
		config := scrapeConfig(job, token)
		if (job.Labels == nil) == strings.Contains(config, "labels:") {
			t.Errorf("%s: labels key present %v with labels %v:\n%s", name, strings.Contains(config, "labels:"), job.Labels, config)
		}
		file := filepath.Join(dir, name+".yml")
		if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(promtool, "check", "config", file).CombinedOutput(); err != nil {
			t.Errorf("%s: promtool check config: %v\n%s\n%s", name, err, out, config)
		}
	}
}
