package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestManagerEnvironment: every environment variable the manager reads (an os.Getenv or
// os.LookupEnv of cmd/) is in the Environment table of docs/reference/manager.md, which
// hack/docgen writes from its own list.
func TestManagerEnvironment(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "reference", "manager.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "cmd", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the manager's sources: %v %v", files, err)
	}
	getenv := regexp.MustCompile(`os\.(?:Getenv|LookupEnv)\("([A-Z_]+)"\)`)
	read := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range getenv.FindAllStringSubmatch(string(src), -1) {
			read++
			if !strings.Contains(string(page), "| `"+m[1]+"` |") {
				t.Errorf("%s reads %s, which docs/reference/manager.md does not list", filepath.Base(f), m[1])
			}
		}
	}
	if read == 0 {
		t.Error("no environment variable read by cmd/ was found: the pattern is stale")
	}
}

var (
	// metricRowRE is a row of the metrics table of docs/reference/metrics.md: name and type.
	metricRowRE = regexp.MustCompile("(?m)^\\| `(oaat_[a-z0-9_]+)` \\| ([a-z]+) \\|")
	// alertRowRE is a row of its alerts table.
	alertRowRE = regexp.MustCompile(`(?m)^\| \[(\w+)\]\(#\w+\) \|`)
	// metricNameRE is a name the docs may give a metric: oaat_ and a word, not inside another
	// word or a file name such as kubectl-oaat_v0.3.0_linux_amd64.tar.gz. The placeholder
	// {{oaat_item}} and the samples' file names (oaat_v1alpha1_...) are not metrics either.
	metricNameRE = regexp.MustCompile(`(^|[^A-Za-z0-9_-])(oaat_[a-z0-9_]*[a-z0-9])`)
)

// TestMetricsReference checks the pages against docs/reference/metrics.md, which hack/docgen
// generates from the operator's collectors and its PrometheusRule: every oaat_ metric a page names
// (a histogram's _bucket, _sum and _count series included) exists; the table of
// docs/metrics-and-alerts.md has a row for every metric, and the page names every alert and no
// alert that does not exist.
func TestMetricsReference(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join(repoRoot, "docs", "reference", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, m := range metricRowRE.FindAllStringSubmatch(string(ref), -1) {
		types[m[1]] = m[2]
	}
	var alerts []string
	for _, m := range alertRowRE.FindAllStringSubmatch(string(ref), -1) {
		alerts = append(alerts, m[1])
	}
	if len(types) < 10 || len(alerts) == 0 {
		t.Fatalf("docs/reference/metrics.md lists %d metrics and %d alerts: the patterns are stale", len(types), len(alerts))
	}
	known := func(name string) bool {
		if types[name] != "" {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && types[base] == "histogram" {
				return true
			}
		}
		return false
	}

	files, err := markdownFiles()
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, file := range files {
		if strings.HasPrefix(file, "docs/reference/") {
			continue
		}
		text, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			for _, m := range metricNameRE.FindAllStringSubmatchIndex(line, -1) {
				name, before := line[m[4]:m[5]], line[:m[4]]
				switch {
				case strings.HasPrefix(name, "oaat_v1"), strings.HasSuffix(before, "{{"), strings.HasSuffix(before, "%%"):
					continue
				case strings.HasSuffix(before, "grep "):
					// A pattern: it must match some metric.
					if !slices.ContainsFunc(sortedKeys(types), func(n string) bool { return strings.HasPrefix(n, name) }) {
						t.Errorf("%s:%d: grep %s matches no metric of docs/reference/metrics.md", file, i+1, name)
					}
					continue
				}
				named++
				if !known(name) {
					t.Errorf("%s:%d: %s is no metric of docs/reference/metrics.md", file, i+1, name)
				}
			}
		}
	}
	if named < len(types) {
		t.Errorf("the docs name oaat_ metrics %d times, fewer than there are metrics: the pattern is stale", named)
	}

	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "metrics-and-alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedKeys(types) {
		if !strings.Contains(string(page), "| `"+name+"` |") {
			t.Errorf("docs/metrics-and-alerts.md: the table has no row for %s", name)
		}
	}
	for _, alert := range alerts {
		if !strings.Contains(string(page), "`"+alert+"`") {
			t.Errorf("docs/metrics-and-alerts.md does not name the alert %s", alert)
		}
	}
	// Any other `Oaat...` it names must be a type of the API reference.
	api, err := os.ReadFile(filepath.Join(repoRoot, "docs", "reference", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("`((?:Cluster)?Oaat[A-Za-z]*)`").FindAllStringSubmatch(string(page), -1) {
		if !slices.Contains(alerts, m[1]) && !strings.Contains(string(api), "\n#### "+m[1]+"\n") {
			t.Errorf("docs/metrics-and-alerts.md names %s, neither an alert of docs/reference/metrics.md nor a type of the API", m[1])
		}
	}
}
