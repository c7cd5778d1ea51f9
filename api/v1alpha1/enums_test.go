package v1alpha1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// readEnumSource parses the package's files (tests excluded) and returns the names of the
// constants of each named type, and the identifiers each function's body names: a value added to
// a type is found here whether or not its list function names it.
func readEnumSource(t *testing.T) (constants, named map[string][]string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	constants, named = map[string][]string{}, map[string][]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				if decl.Tok != token.CONST {
					continue
				}
				for _, spec := range decl.Specs {
					vs := spec.(*ast.ValueSpec)
					if typ, ok := vs.Type.(*ast.Ident); ok {
						for _, name := range vs.Names {
							constants[typ.Name] = append(constants[typ.Name], name.Name)
						}
					}
				}
			case *ast.FuncDecl:
				if decl.Body == nil {
					continue
				}
				ast.Inspect(decl.Body, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok {
						named[decl.Name.Name] = append(named[decl.Name.Name], id.Name)
					}
					return true
				})
			}
		}
	}
	return constants, named
}

// TestEnumListsHoldEveryConstant checks that StopReasons, WaitReasons, RunResults and Reasons name every
// constant of their type declared in the package, and return as many distinct values: the tests
// that walk these lists through the tables that give the values their meaning then cannot miss
// one.
func TestEnumListsHoldEveryConstant(t *testing.T) {
	declared, named := readEnumSource(t)
	for _, enum := range []struct {
		typ, list string
		values    []string
	}{
		{"StopReason", "StopReasons", valuesOf(StopReasons())},
		{"WaitReason", "WaitReasons", valuesOf(WaitReasons())},
		{"RunResult", "RunResults", valuesOf(RunResults())},
		{"Reason", "Reasons", valuesOf(Reasons())},
	} {
		constants := declared[enum.typ]
		if len(constants) == 0 {
			t.Fatalf("no constant of type %s found in the package's source", enum.typ)
		}
		for _, name := range constants {
			if !slices.Contains(named[enum.list], name) {
				t.Errorf("%s() does not list %s, a %s", enum.list, name, enum.typ)
			}
		}
		distinct := slices.Compact(slices.Sorted(slices.Values(enum.values)))
		if len(distinct) != len(enum.values) || len(enum.values) != len(constants) {
			t.Errorf("%s() returns %d values (%d distinct) for the %d constants of %s: %v",
				enum.list, len(enum.values), len(distinct), len(constants), enum.typ, enum.values)
		}
	}
}

// TestStopReasonsAreLastReasons checks that each stop reason is the Reason constant that the run
// it stops records as its lastReason.
func TestStopReasonsAreLastReasons(t *testing.T) {
	want := map[StopReason]Reason{
		StopDeadlineExceeded: ReasonDeadlineExceeded, StopPendingTimeout: ReasonPendingTimeout,
		StopInterrupted: ReasonInterrupted, StopDisrupted: ReasonDisrupted,
	}
	for _, reason := range StopReasons() {
		if got, ok := want[reason]; !ok || string(reason) != string(got) {
			t.Errorf("stop reason %q: want the Reason constant %q", reason, got)
		}
	}
}

// conditionReason is what the API server accepts as a condition's reason (metav1.Condition's
// validation): an identifier of letters, digits, _, comma and colon, starting with a letter.
var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// TestReasonsAreConditionReasons checks each Reason against the rule the API server applies to a
// condition's reason, and that it is CamelCase, as Kubernetes' own event reasons are.
func TestReasonsAreConditionReasons(t *testing.T) {
	for _, r := range Reasons() {
		if !conditionReason.MatchString(string(r)) || len(r) > 1024 || !unicode.IsUpper(rune(r[0])) {
			t.Errorf("reason %q is not a CamelCase condition reason", r)
		}
	}
}

// valuesOf returns the values of a list function, as strings.
func valuesOf[T ~string](list []T) []string {
	values := make([]string, 0, len(list))
	for _, v := range list {
		values = append(values, string(v))
	}
	return values
}
