package docs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/oaat-io/oaat-operator/tests/support"
)

var (
	// makeRE finds a make command in a snippet: "make" as a word, then its arguments up to the end
	// of the command.
	makeRE = regexp.MustCompile(`(?:^|[\s(;&|])make\s+([^|;&)#]*)`)
	// targetRE is a make target as the docs name them.
	targetRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	// makefileTargetRE is a rule of the Makefile.
	makefileTargetRE = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*(?:\s+[A-Za-z0-9][A-Za-z0-9_.-]*)*)\s*:([^=]|$)`)
)

// makeTargets returns the targets of a make command line: the words after "make" that are not
// flags or variable assignments, until one that is none of these.
func makeTargets(args string) []string {
	var targets []string
	fields := strings.Fields(args)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == "-C" || f == "-f":
			i++ // their argument
		case strings.HasPrefix(f, "-"), strings.Contains(f, "="):
		case targetRE.MatchString(f):
			targets = append(targets, f)
		default:
			return targets
		}
	}
	return targets
}

// makefileTargets reads the rules of the Makefile.
func makefileTargets(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	targets := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := makefileTargetRE.FindStringSubmatch(sc.Text()); m != nil {
			for _, name := range strings.Fields(m[1]) {
				targets[name] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return targets
}

// TestMakeTargets checks that every `make TARGET` the docs show, in shell blocks and inline code,
// is a target of the Makefile.
func TestMakeTargets(t *testing.T) {
	pages, err := readPages()
	if err != nil {
		t.Fatal(err)
	}
	known := makefileTargets(t)
	named := map[string]bool{}
	for _, p := range pages {
		for _, s := range p.codeSnippets() {
			for _, m := range makeRE.FindAllStringSubmatch(s.text, -1) {
				for _, target := range makeTargets(m[1]) {
					named[target] = true
					if !known[target] {
						t.Errorf("%s: `make %s`: the Makefile has no target %q", s.where, strings.TrimSpace(m[1]), target)
					}
				}
			}
		}
	}
	// The two commands of the README's first lines must be among those found: the check
	// reads the docs at all.
	for _, target := range []string{"demo", "test", "verify", "test-docs"} {
		if !named[target] {
			t.Errorf("the docs never name `make %s` (found: %v)", target, sortedKeys(named))
		}
	}
	t.Logf("%d make targets named by the docs, all in the Makefile", len(named))
}

// kubectlOaatRE finds a kubectl oaat command: its subcommand and the rest of its line.
var kubectlOaatRE = regexp.MustCompile(`kubectl oaat ([a-z][a-z-]*)([^\n|;&#` + "`" + `]*)`)

// flagRE finds the flags of a command line.
var flagRE = regexp.MustCompile(`(?:^|\s)(--?[a-zA-Z][a-zA-Z0-9-]*)`)

// TestKubectlOaatCommands builds the plugin and checks that every `kubectl oaat SUBCOMMAND` the
// docs show is a subcommand, and that every flag on the line is one of its flags.
func TestKubectlOaatCommands(t *testing.T) {
	pages, err := readPages()
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(t.TempDir(), "kubectl-oaat")
	ldflags, err := support.VersionLDFlags(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-ldflags", ldflags, "-o", plugin, "./cmd/kubectl-oaat")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}

	helps := map[string]string{}
	help := func(sub string) string {
		if h, ok := helps[sub]; ok {
			return h
		}
		// An unknown subcommand fails, or prints the root's help; either way its usage line is
		// not there.
		out, _ := exec.Command(plugin, append(strings.Fields(sub), "--help")...).CombinedOutput()
		helps[sub] = string(out)
		return helps[sub]
	}
	count := 0
	for _, p := range pages {
		for _, s := range p.codeSnippets() {
			for _, m := range kubectlOaatRE.FindAllStringSubmatch(s.text, -1) {
				count++
				sub, rest := m[1], m[2]
				h := help(sub)
				if !strings.Contains(h, "Usage:\n  kubectl-oaat "+sub) {
					t.Errorf("%s: `kubectl oaat %s`: no such subcommand of cmd/kubectl-oaat:\n%s", s.where, sub, h)
					continue
				}
				// A command of its own (`history export`): its flags are its own.
				if words := strings.Fields(rest); len(words) > 0 && strings.Contains(h, "Available Commands:") {
					nested := sub + " " + words[0]
					if !strings.Contains(help(nested), "Usage:\n  kubectl-oaat "+nested) {
						t.Errorf("%s: `kubectl oaat %s`: no such subcommand of cmd/kubectl-oaat:\n%s", s.where, nested, help(nested))
						continue
					}
					h = help(nested)
				}
				for _, f := range flagRE.FindAllStringSubmatch(rest, -1) {
					flag := f[1]
					if !strings.Contains(h, flag+" ") && !strings.Contains(h, flag+", ") && !strings.Contains(h, flag+"=") {
						t.Errorf("%s: `kubectl oaat %s%s`: %s is not a flag of `kubectl oaat %s`", s.where, sub, strings.TrimRight(rest, " "), flag, sub)
					}
				}
			}
		}
	}
	subs := sortedKeys(helps)
	for _, want := range []string{"status", "run", "suspend", "resume", "locks"} {
		if !slices.Contains(subs, want) {
			t.Errorf("the docs never show `kubectl oaat %s` (found: %v)", want, subs)
		}
	}
	t.Logf("%d kubectl oaat commands checked, subcommands %v", count, subs)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
