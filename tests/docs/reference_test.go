package docs

import (
	"os"
	"path/filepath"
	"regexp"
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
