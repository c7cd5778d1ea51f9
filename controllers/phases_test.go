package controllers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var (
	// planPhase is an entry of the numbered list of phases in planner.Plan's comment.
	planPhase = regexp.MustCompile(`^\s*(\d+)\. ([^:]+):`)
	// docPhase is a phase named in docs/architecture.md's list: in italics.
	docPhase = regexp.MustCompile(`(?:^|[^*])\*([^*\s][^*]*)\*(?:[^*]|$)`)
)

// phaseNames returns the names of the phases that applyPhases lists, in order, each phase that
// alongside pairs counted apart: the name fields of applyPhases' source.
func phaseNames(t *testing.T) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "apply.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "applyPhases" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "name" {
				if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					names = append(names, name)
				}
			}
			return true
		})
	}
	return names
}

// TestApplyPhasesDocumented holds the two lists of apply's phases to applyPhases: the numbered
// list in planner.Plan's comment (one entry per phase as apply runs them, a pair run alongside
// being one), and the phases docs/architecture.md names in its account of apply (in italics,
// each phase of a pair apart).
func TestApplyPhasesDocumented(t *testing.T) {
	var running []string
	for _, phase := range (&OaatGroupReconciler{}).applyPhases() {
		running = append(running, phase.name)
	}
	names := phaseNames(t)
	if len(names) < len(running) {
		t.Fatalf("read %d phase names from apply.go for %d phases; the test no longer reads applyPhases", len(names), len(running))
	}

	planSource, err := os.ReadFile("../internal/planner/plan.go")
	if err != nil {
		t.Fatal(err)
	}
	comment := string(planSource)
	start := strings.Index(comment, "// Plan is what the controller applies")
	end := strings.Index(comment, "type Plan struct")
	if start < 0 || end < start {
		t.Fatal("planner/plan.go: the comment of Plan is not found")
	}
	var planned []string
	for i, line := range strings.Split(comment[start:end], "\n") {
		m := planPhase.FindStringSubmatch(strings.TrimPrefix(line, "//"))
		if m == nil {
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n != len(planned)+1 {
			t.Errorf("planner.Plan's comment, line %d: phase numbered %s, want %d", i+1, m[1], len(planned)+1)
		}
		planned = append(planned, m[2])
	}
	if !slices.Equal(planned, running) {
		t.Errorf("planner.Plan's comment lists the phases\n  %q\napplyPhases runs\n  %q", planned, running)
	}

	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start = strings.Index(text, "3. **apply**")
	end = strings.Index(text, "Because every decision is in `Decide`")
	if start < 0 || end < start {
		t.Fatal("docs/architecture.md: the account of apply (3. **apply** ...) is not found")
	}
	var documented []string
	for _, m := range docPhase.FindAllStringSubmatch(strings.ReplaceAll(text[start:end], "\n", " "), -1) {
		documented = append(documented, m[1])
	}
	if !slices.Equal(documented, names) {
		t.Errorf("docs/architecture.md names the phases\n  %q\napplyPhases lists\n  %q", documented, names)
	}
}
