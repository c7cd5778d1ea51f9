package docs

import (
	"fmt"
	"strings"
	"testing"
)

// inlineCommandStarts are the first words of the inline code spans of the prose that are
// commands a reader may type.
var inlineCommandStarts = []string{"kubectl ", "make ", "helm "}

// inlineCommand is a command written in an inline code span of a page's prose.
type inlineCommand struct {
	where, file, text string
}

// inlineCommands returns the inline code spans of the docs' prose that start with one of
// inlineCommandStarts, their whitespace (a span may wrap across lines) made single spaces.
func inlineCommands(t *testing.T) []inlineCommand {
	t.Helper()
	pages, err := readPages()
	if err != nil {
		t.Fatal(err)
	}
	var out []inlineCommand
	for _, p := range pages {
		for _, s := range p.proseSnippets() {
			text := strings.Join(strings.Fields(s.text), " ")
			for _, start := range inlineCommandStarts {
				if strings.HasPrefix(text, start) {
					out = append(out, inlineCommand{where: s.where, file: p.file, text: text})
					break
				}
			}
		}
	}
	return out
}

// Every command written inline in the prose is run by a test or said not to be, as the commands
// of the shell blocks are (TestShellCommandsAreRun): it is a command of a block of the docs that
// a test runs (a transcript, or a block marked checked-by), written the same, or notRun gives the
// reason no test runs it.
func TestInlineCommandsAreRunOrListed(t *testing.T) {
	run := map[string]string{}
	for _, c := range pageCommands(t) {
		if c.coveredBy == "" || strings.HasPrefix(c.coveredBy, "not run: ") {
			continue
		}
		for _, line := range strings.Split(c.text, "\n") {
			code := strings.Join(strings.Fields(strings.SplitN(line, " #", 2)[0]), " ")
			if _, seen := run[code]; !seen {
				run[code] = c.coveredBy + " (" + c.where + ")"
			}
		}
	}
	byHow := map[string]int{}
	uncovered := 0
	cmds := inlineCommands(t)
	for _, c := range cmds {
		how := run[c.text]
		if how != "" {
			byHow["run: the same command in a block a test runs"]++
			continue
		}
		if how = whyNotRun(c.file, c.text); how == "" {
			uncovered++
			t.Errorf("%s: no test runs the inline command `%s`: write it as a block a test runs, or give notRun the reason none does", c.where, c.text)
			continue
		}
		byHow[how]++
	}
	var summary []string
	for _, how := range sortedKeys(byHow) {
		summary = append(summary, fmt.Sprintf("  %3d %s", byHow[how], how))
	}
	t.Logf("%d inline commands in the docs' prose, %d with nothing:\n%s", len(cmds), uncovered, strings.Join(summary, "\n"))
	if len(cmds) < 20 {
		t.Errorf("only %d inline commands found in the docs: the extraction is broken", len(cmds))
	}
}
