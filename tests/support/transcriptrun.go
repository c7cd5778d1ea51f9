package support

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// transcriptSuites names the test package that makes the transcripts of a page when it is not
// tests/e2e (the kwok cluster): the pages whose commands need a real kubelet, or OLM.
var transcriptSuites = map[string]string{
	"docs/olm.md":        "tests/olmcatalog",
	"docs/pvc-backup.md": "tests/realnode",
}

// TranscriptPages returns the pages (DocPages) whose transcripts the test package suite
// ("tests/e2e", "tests/realnode") makes.
func TranscriptPages(root, suite string) ([]string, error) {
	pages, err := DocPages(root)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(pages, func(p string) bool {
		owner, ok := transcriptSuites[p]
		if !ok {
			owner = "tests/e2e"
		}
		return owner != suite
	}), nil
}

// TranscriptRunner runs the command lines of the pages' transcripts: "kubectl ..." with Kubectl,
// "kubectl oaat ..." with KubectlOaat and "operator-sdk ..." with OperatorSDK, in Dir (the
// repository's root, which the pages' paths are relative to), with Env added to the process's
// environment (KUBECONFIG). ExtraArgs, when set, returns words to add after those of a command
// (its binary's name first) that the page does not show: the flags a local cluster needs and a
// user's does not, which the page says.
type TranscriptRunner struct {
	Kubectl, KubectlOaat, OperatorSDK, Dir string
	Env                                    []string
	ExtraArgs                              func(words []string) []string
}

// Command runs a command line of a page and returns its output (stdout and stderr, as a
// terminal shows them). Its words are split as a shell splits them (CommandWords): quotes, and a
// trailing "# ..." comment.
func (r TranscriptRunner) Command(ctx context.Context, line string) (string, error) {
	args, err := CommandWords(line)
	if err != nil {
		return "", err
	}
	binaries := map[string]string{"kubectl": r.Kubectl, "operator-sdk": r.OperatorSDK}
	if len(args) < 2 || binaries[args[0]] == "" {
		return "", fmt.Errorf("command %q: the transcripts run kubectl, its plugin and operator-sdk only (the runner's binaries)", line)
	}
	if r.ExtraArgs != nil {
		args = append(args, r.ExtraArgs(args)...)
	}
	binary := binaries[args[0]]
	if args[0] == "kubectl" && args[1] == "oaat" {
		binary, args = r.KubectlOaat, args[1:]
	}
	args = args[1:]
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), r.Env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Transcript is the block of a page being made: each command run, after its prompt "$ " unless
// NoPrompt, then its output.
type Transcript struct {
	Runner   TranscriptRunner
	NoPrompt bool
	text     strings.Builder
}

// Run runs the command line and adds it and its output to the transcript, which ends in a
// newline; a command that fails is an error naming it, with its output.
func (t *Transcript) Run(ctx context.Context, line string) error {
	out, err := t.Runner.Command(ctx, line)
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", line, err, out)
	}
	if !t.NoPrompt {
		t.text.WriteString("$ " + line + "\n")
	}
	// The next prompt on the line after the output: an output without a newline at its end
	// (kubectl get -o jsonpath) gets one, and the blank line that ends a table of kubectl oaat
	// status goes, as a page does not show it.
	if out != "" {
		t.text.WriteString(strings.TrimRight(out, "\n") + "\n")
	}
	return nil
}

// String returns the block: what was run.
func (t *Transcript) String() string {
	return t.text.String()
}

// CheckTranscripts compares the marked blocks of the pages with outputs, by transcript name,
// and returns a description of each block that differs (TranscriptDiff), or, with write, writes
// outputs into the blocks (WriteTranscripts) and returns nothing. A block without an output, or
// an output without a block, is an error.
func CheckTranscripts(root string, pages []string, outputs map[string]string, write bool) ([]string, error) {
	return checkTranscripts(root, pages, outputs, write, true)
}

// CheckSomeTranscripts is CheckTranscripts for a suite whose specs each make some of the pages'
// transcripts (tests/olmcatalog, which runs focused): a block without an output is left alone.
func CheckSomeTranscripts(root string, pages []string, outputs map[string]string, write bool) ([]string, error) {
	return checkTranscripts(root, pages, outputs, write, false)
}

func checkTranscripts(root string, pages []string, outputs map[string]string, write, all bool) ([]string, error) {
	blocks, err := ReadTranscripts(root, pages)
	if err != nil {
		return nil, err
	}
	var problems, marked []string
	for _, b := range blocks {
		marked = append(marked, b.Name)
		if _, ok := outputs[b.Name]; !ok && all {
			problems = append(problems, b.Where()+": no scenario of the test makes transcript "+b.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(outputs)) {
		if !slices.Contains(marked, name) {
			problems = append(problems, "no page of "+strings.Join(pages, ", ")+" has the block of transcript "+name)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	if write {
		_, err := WriteTranscripts(root, pages, outputs)
		return nil, err
	}
	var stale []string
	for _, b := range blocks {
		if _, ok := outputs[b.Name]; !ok {
			continue
		}
		if diff := TranscriptDiff(b.Text, outputs[b.Name]); diff != "" {
			stale = append(stale, b.Where()+": transcript "+b.Name+" (- the page, + the commands, normalised):\n"+diff)
		}
	}
	return stale, nil
}
