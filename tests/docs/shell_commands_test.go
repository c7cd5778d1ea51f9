package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// notRun are the commands of the docs that no test runs from its page, by their page (any when
// "") and the start of their line, each with the reason. Keep it short: a command a user types
// on a cluster belongs in a transcript or in a block a test runs (<!-- checked-by: tests/PKG
// NAME -->). The entries of inlineNotRun say it of the commands written inline in the prose only.
var notRun = []notRunEntry{
	{file: "", prefix: "make ", reason: "a target of the Makefile (TestMakeTargets checks it exists); CI runs make test and make verify, the others are a developer's"},
	{file: "", prefix: "go build -o bin/kubectl-oaat ./cmd/kubectl-oaat", reason: "TestKubectlOaatCommands builds the plugin so"},
	{file: "", prefix: "go install ./cmd/kubectl-oaat", reason: "builds the plugin as TestKubectlOaatCommands does, into the user's GOBIN"},
	{file: "", prefix: "install -m 0755 bin/kubectl-oaat /usr/local/bin/", reason: "writes into the machine's /usr/local/bin"},
	{file: "", prefix: "kubectl plugin list", reason: "lists the plugins of the user's PATH, after the install line above"},
	{file: "", prefix: "kubectl oaat --help", reason: "TestKubectlOaatCommands runs every subcommand's --help"},
	{file: "", prefix: "kubectl krew ", reason: "krew is not among the test tools; make krew-manifest builds the manifest and archives"},
	{file: "docs/kubectl-plugin.md", prefix: "kubectl oaat ", reason: "a list of examples: TestKubectlOaatCommands checks each subcommand and flag, " +
		"the transcripts run status, run --wait, suspend, resume and locks (-w and --wait do not return by themselves)"},
	{file: "", prefix: "kubectl annotate oaatgroups.kawaja.net ", reason: "the Python oaat-operator's CRD, which no test cluster has"},
}

// notRunEntry says why no test runs the commands of a page (any when file is "") that start with
// prefix, or are exactly it when exact is set.
type notRunEntry struct {
	file, prefix, reason string
	exact                bool
}

// shellCommand is a command of a page: a logical line of a shell block (continued lines,
// heredocs and loops joined), or a $-prompt line of a console block.
type shellCommand struct {
	where string
	text  string
	// coveredBy says which test runs it, or why none does; "" when none.
	coveredBy string
}

var heredocRE = regexp.MustCompile(`<<-?\s*'?([A-Z]+)'?`)

// shellBlockCommands splits the text of a ```sh block into its commands: a line ending in \, |
// or && goes on, a heredoc takes the lines to its end word, a while/for/if takes them to its
// done/fi; blank lines and whole-line comments are no commands.
func shellBlockCommands(text string) []string {
	var out []string
	var cur []string
	heredocEnd := ""
	depth := 0
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if len(cur) == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		cur = append(cur, line)
		switch {
		case heredocEnd != "":
			if trimmed == heredocEnd {
				heredocEnd = ""
			}
		case heredocRE.MatchString(line):
			heredocEnd = heredocRE.FindStringSubmatch(line)[1]
		}
		first := strings.Fields(trimmed)
		if heredocEnd == "" && len(first) > 0 {
			switch first[0] {
			case "while", "for", "if":
				depth++
			case "done", "fi":
				depth--
			}
		}
		code := strings.TrimSpace(strings.SplitN(line, " #", 2)[0])
		if heredocEnd != "" || depth > 0 || strings.HasSuffix(code, `\`) || strings.HasSuffix(code, "|") || strings.HasSuffix(code, "&&") {
			continue
		}
		out = append(out, strings.Join(cur, "\n"))
		cur = nil
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}

// consoleBlockCommands returns the $-prompt lines of a console block, with their continued lines.
func consoleBlockCommands(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		cmd, ok := strings.CutPrefix(lines[i], "$ ")
		if !ok {
			continue
		}
		for strings.HasSuffix(strings.TrimSpace(cmd), `\`) && i+1 < len(lines) {
			i++
			cmd += "\n" + lines[i]
		}
		out = append(out, cmd)
	}
	return out
}

// checkedByTest says whether package pkg (tests/...) reads blocks of the docs with
// support.CheckedBlocks(..., "pkg", ...) and names the blocks name in a string literal.
func checkedByTest(pkg, name string) (bool, error) {
	files, err := filepath.Glob(filepath.Join(repoRoot, pkg, "*.go"))
	if err != nil {
		return false, err
	}
	callRE := regexp.MustCompile(`support\.CheckedBlocks\([^,]+,\s*"` + regexp.QuoteMeta(pkg) + `"`)
	calls, named := false, false
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		calls = calls || callRE.Match(data)
		named = named || strings.Contains(string(data), `"`+name+`"`)
	}
	return calls && named, nil
}

// expectCheckedByTest reports whether package pkg reads the blocks name of the docs
// (checkedByTest), and fails t at block b, marked <!-- checked-by: pkg name -->, when it does not.
func expectCheckedByTest(t *testing.T, b block, pkg, name string) bool {
	t.Helper()
	found, err := checkedByTest(pkg, name)
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Errorf("%s: <!-- checked-by: %s %s -->: %s does not read the blocks %q with support.CheckedBlocks(..., %q, ...)", b.where(), pkg, name, pkg, name, pkg)
	}
	return found
}

// whyNotRun returns why no test runs the command of the page, from the entries (notRun, or
// inlineNotRun too for an inline command), or "" when nothing says.
func whyNotRun(file, cmd string, entries ...notRunEntry) string {
	cmd = strings.TrimSpace(cmd)
	if len(entries) == 0 {
		entries = notRun
	}
	for _, n := range entries {
		if (n.file == "" || n.file == file) && (n.exact && cmd == n.prefix || !n.exact && strings.HasPrefix(cmd, n.prefix)) {
			return "not run: " + n.reason
		}
	}
	return ""
}

// pageCommands returns every command of the docs' shell and console blocks, each with what
// covers it.
func pageCommands(t *testing.T) []shellCommand {
	t.Helper()
	pages, err := readPages()
	if err != nil {
		t.Fatal(err)
	}
	var out []shellCommand
	for _, p := range pages {
		for _, b := range p.blocks {
			var cmds []string
			switch b.lang {
			case "sh", "bash", "shell":
				cmds = shellBlockCommands(b.text)
			case "console":
				cmds = consoleBlockCommands(b.text)
			default:
				continue
			}
			covered := ""
			if name, ok := strings.CutPrefix(b.marker, "transcript:"); ok {
				covered = "the transcript " + strings.TrimSpace(name)
			} else if pkg, name, ok := support.ParseCheckedBy(b.marker); ok && expectCheckedByTest(t, b, pkg, name) {
				covered = pkg + " " + name
			}
			for _, c := range cmds {
				cmd := shellCommand{where: b.where(), text: c, coveredBy: covered}
				if covered == "" {
					cmd.coveredBy = whyNotRun(p.file, c)
				}
				out = append(out, cmd)
			}
		}
	}
	return out
}

// Every shell command the docs tell a user to type is run by a test as the page shows it: it is
// in a console transcript (made by its commands, tests/e2e/transcripts_test.go), or in a block
// marked <!-- checked-by: tests/PKG NAME --> that a test of that package reads from the page and
// runs (support.CheckedBlocks), or it is one of the few of notRun, each with its reason.
func TestShellCommandsAreRun(t *testing.T) {
	cmds := pageCommands(t)
	byHow := map[string]int{}
	uncovered := 0
	for _, c := range cmds {
		if c.coveredBy == "" {
			uncovered++
			t.Errorf("%s: no test runs `%s`: put its block in a transcript, or mark it <!-- checked-by: tests/PKG NAME --> "+
				"and run it with support.CheckedBlocks in that package", c.where, c.text)
			continue
		}
		how := c.coveredBy
		if strings.HasPrefix(how, "the transcript ") {
			how = "transcripts"
		}
		byHow[how]++
	}
	var summary []string
	run, notRunCount := 0, 0
	for _, how := range sortedKeys(byHow) {
		summary = append(summary, fmt.Sprintf("  %3d %s", byHow[how], how))
		if strings.HasPrefix(how, "not run: ") {
			notRunCount += byHow[how]
		} else {
			run += byHow[how]
		}
	}
	t.Logf("%d shell commands in the docs: %d run by a test from their page, %d not run (notRun), %d with nothing:\n%s",
		len(cmds), run, notRunCount, uncovered, strings.Join(summary, "\n"))
	if len(cmds) < 50 {
		t.Errorf("only %d commands found in the docs: the extraction is broken", len(cmds))
	}
}

func TestShellBlockCommands(t *testing.T) {
	got := shellBlockCommands(`# a comment
kubectl get oag    # inline comment \
kubectl create clusterrolebinding x \
  --clusterrole y
kubectl get oaatgroups -A -o jsonpath='{.items}' |
  while read -r ns name; do
    kubectl patch oaatgroup "$name" -n "$ns"
  done
kubectl create -f - <<'YAML'
kind: OaatRun
YAML

make test
`)
	want := []string{
		"kubectl get oag    # inline comment \\",
		"kubectl create clusterrolebinding x \\\n  --clusterrole y",
		"kubectl get oaatgroups -A -o jsonpath='{.items}' |\n  while read -r ns name; do\n    kubectl patch oaatgroup \"$name\" -n \"$ns\"\n  done",
		"kubectl create -f - <<'YAML'\nkind: OaatRun\nYAML",
		"make test",
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("shellBlockCommands:\n got %q\nwant %q", got, want)
	}
}
