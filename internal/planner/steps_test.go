package planner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// stepRow is a row of the step table in Decide's comment: a line whose first word, at the
// table's first column, is a step.
var stepRow = regexp.MustCompile(`^\t([a-z][A-Za-z]+)\s`)

// TestDecideStepTable holds the table of steps in Decide's comment to Decide itself: the same
// steps, in the order Decide calls them (the methods of the decision it calls, read from
// plan.go's source).
func TestDecideStepTable(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "plan.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var decide *ast.FuncDecl
	for _, decl := range file.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Name.Name == "Decide" && fn.Recv == nil {
			decide = fn
		}
	}
	if decide == nil || decide.Doc == nil {
		t.Fatal("plan.go has no documented func Decide")
	}
	var called []string
	ast.Inspect(decide.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			if recv, ok := sel.X.(*ast.Ident); ok && recv.Name == "d" {
				called = append(called, sel.Sel.Name)
			}
		}
		return true
	})
	var table []string
	inTable := false
	for _, line := range strings.Split(decide.Doc.Text(), "\n") {
		if strings.HasPrefix(line, "\tstep ") {
			inTable = true
			continue
		}
		if m := stepRow.FindStringSubmatch(line); inTable && m != nil {
			table = append(table, m[1])
		}
	}
	if len(called) == 0 || len(table) == 0 {
		t.Fatalf("found %d calls and %d table rows; the test no longer reads plan.go", len(called), len(table))
	}
	if !slices.Equal(called, table) {
		t.Errorf("Decide's comment lists the steps\n  %v\nDecide calls\n  %v", table, called)
	}
}
