package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	// claimRE is the claim of docs/capability-levels.md.
	claimRE = regexp.MustCompile("\\*\\*The claim today: `capabilities: ([^`]+)`\\*\\*")
	// csvClaimRE is the CSV's capabilities annotation.
	csvClaimRE = regexp.MustCompile(`(?m)^\s+capabilities: (.+)$`)
	// levelRE is the heading of a level's section.
	levelRE = regexp.MustCompile(`^## Level (\d): (.+)$`)
	// pathRE is a file or directory of the tree named in backquotes.
	pathRE = regexp.MustCompile("`((?:tests|internal)/[A-Za-z0-9_./-]+)`")
	// testFuncRE is a Go test named in backquotes.
	testFuncRE = regexp.MustCompile("`(Test[A-Za-z0-9_]+)`")
	// specRE is a Ginkgo spec quoted right after the test file that holds it.
	specRE = regexp.MustCompile("`(tests/[A-Za-z0-9_./-]+\\.go)`(?: \\([^)]*\\))?[,:] \"(… )?([^\"…]+)")
)

// TestCapabilityClaim holds docs/capability-levels.md and the CSV together: the page's claim is
// the CSV's capabilities annotation; the levels up to the one claimed each have their table; and
// every row of those tables names a test of the tree, whose files, Go tests and Ginkgo specs
// exist as named.
func TestCapabilityClaim(t *testing.T) {
	page := readFile(t, "docs/capability-levels.md")
	csv := readFile(t, "config/manifests/bases/oaat-operator.clusterserviceversion.yaml")
	claim, csvClaim := claimRE.FindStringSubmatch(page), csvClaimRE.FindStringSubmatch(csv)
	if claim == nil || csvClaim == nil {
		t.Fatalf("the page's claim %q, the CSV's annotation %q: want both", claim, csvClaim)
	}
	if claim[1] != strings.TrimSpace(csvClaim[1]) {
		t.Errorf("the page claims %q, the CSV says %q", claim[1], csvClaim[1])
	}
	rows := levelRows(page)
	claimed := 0
	for n, level := range levelNames(page) {
		if level == claim[1] {
			claimed = n
		}
	}
	if claimed == 0 {
		t.Fatalf("no section of the page is the level claimed, %q", claim[1])
	}
	for n := 1; n <= claimed; n++ {
		if len(rows[n]) == 0 {
			t.Errorf("level %d is claimed and has no table of requirements", n)
		}
		for _, row := range rows[n] {
			checkProof(t, n, row)
		}
	}
}

// checkProof checks that the last cell of a row of level n names a test of the tree: at least one
// path, each existing, and each Go test and Ginkgo spec in a file under the paths it names.
func checkProof(t *testing.T, n int, row string) {
	t.Helper()
	cells := strings.Split(strings.Trim(row, "|"), " | ")
	requirement, proof := cells[0], cells[len(cells)-1]
	paths := pathRE.FindAllStringSubmatch(proof, -1)
	if len(paths) == 0 {
		t.Errorf("level %d, %q: names no test (%s)", n, requirement, proof)
		return
	}
	var sources strings.Builder
	for _, p := range paths {
		info, err := os.Stat(filepath.Join(repoRoot, p[1]))
		if err != nil {
			t.Errorf("level %d, %q: %s does not exist", n, requirement, p[1])
			continue
		}
		dir := p[1]
		if !info.IsDir() {
			dir = filepath.Dir(dir)
		}
		files, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*_test.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sources.Write(src)
		}
	}
	for _, f := range testFuncRE.FindAllStringSubmatch(proof, -1) {
		if !strings.Contains(sources.String(), "func "+f[1]+"(") {
			t.Errorf("level %d, %q: no %s in the packages it names", n, requirement, f[1])
		}
	}
	for _, s := range specRE.FindAllStringSubmatch(proof, -1) {
		if spec := strings.TrimRight(s[3], " ,"); !hasSpec(readFile(t, s[1]), spec, s[2] != "") {
			t.Errorf("level %d, %q: %s has no spec %q", n, requirement, s[1], spec)
		}
	}
}

// goStringRE is a Go string literal.
var goStringRE = regexp.MustCompile(`"((?:[^"\\\n]|\\.)*)"`)

// hasSpec reports whether the Go source src makes the spec named: its texts (a Describe's, then
// an It's), each a string literal of src, the last of them whole or its beginning, or followed by
// one word that a table fills in (an install mode); a spec named by its end (tail, after "…")
// ends a literal.
func hasSpec(src, spec string, tail bool) bool {
	var literals []string
	for _, m := range goStringRE.FindAllStringSubmatch(src, -1) {
		if l := strings.TrimSpace(m[1]); len(l) >= 8 {
			literals = append(literals, l)
		}
	}
	if tail {
		return slices.ContainsFunc(literals, func(l string) bool { return strings.HasSuffix(l, spec) })
	}
	rest, found := spec, 0
	for rest != "" {
		longest := ""
		for _, l := range literals {
			if strings.HasPrefix(rest, l) && len(l) > len(longest) {
				longest = l
			}
		}
		if longest == "" {
			break
		}
		rest, found = strings.TrimSpace(strings.TrimPrefix(rest, longest)), found+1
	}
	return found > 0 && !strings.Contains(rest, " ") ||
		slices.ContainsFunc(literals, func(l string) bool { return strings.HasPrefix(l, rest) })
}

// levelNames are the levels' names by number, from their sections' headings.
func levelNames(page string) map[int]string {
	names := map[int]string{}
	for _, line := range strings.Split(page, "\n") {
		if m := levelRE.FindStringSubmatch(line); m != nil {
			names[int(m[1][0]-'0')] = m[2]
		}
	}
	return names
}

// levelRows are the rows of each level's tables of proofs (their last column "proven by"), by
// level, without their headers and rules.
func levelRows(page string) map[int][]string {
	rows := map[int][]string{}
	level, inTable, proofs := 0, false, false
	for _, line := range strings.Split(page, "\n") {
		if m := levelRE.FindStringSubmatch(line); m != nil {
			level = int(m[1][0] - '0')
			continue
		}
		if strings.HasPrefix(line, "## ") {
			level = 0
		}
		switch {
		case !strings.HasPrefix(line, "|"):
			inTable = false
		case !inTable: // the header: a table of proofs ends with the column "proven by"
			inTable, proofs = true, strings.HasSuffix(strings.TrimSpace(line), "| proven by |")
		case strings.HasPrefix(line, "|---"):
		case proofs && level > 0:
			rows[level] = append(rows[level], line)
		}
	}
	return rows
}

// readFile reads a file of the tree.
func readFile(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
