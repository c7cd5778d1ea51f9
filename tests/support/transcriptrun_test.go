package support

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// printfRunner stands for kubectl and the plugin with printf, which prints its format: the
// command line's first word after kubectl (or kubectl oaat).
var printfRunner = TranscriptRunner{Kubectl: "/usr/bin/printf", KubectlOaat: "/usr/bin/printf", OperatorSDK: "/usr/bin/printf"}

func TestTranscriptRun(t *testing.T) {
	ctx := context.Background()
	block := &Transcript{Runner: printfRunner}
	for _, line := range []string{
		`kubectl 'a table\n\n'     # a page's comment`,
		`kubectl oaat 'no newline'`,
		`kubectl ''`,
	} {
		if err := block.Run(ctx, line); err != nil {
			t.Fatal(err)
		}
	}
	want := "$ kubectl 'a table\\n\\n'     # a page's comment\na table\n$ kubectl oaat 'no newline'\nno newline\n$ kubectl ''\n"
	if got := block.String(); got != want {
		t.Errorf("the transcript:\n got %q\nwant %q", got, want)
	}
	if err := block.Run(ctx, "ls /"); err == nil || !strings.Contains(err.Error(), "kubectl, its plugin and operator-sdk only") {
		t.Errorf("a command other than kubectl: %v", err)
	}
	// ExtraArgs adds words the page does not show: printf prints the second as the first's %s.
	sdk := &Transcript{Runner: TranscriptRunner{OperatorSDK: "/usr/bin/printf", ExtraArgs: func(words []string) []string {
		if words[0] != "operator-sdk" {
			t.Errorf("ExtraArgs got %q, not the command's words", words)
		}
		return []string{"local"}
	}}}
	if err := sdk.Run(ctx, `operator-sdk 'scorecard %s'`); err != nil {
		t.Fatal(err)
	}
	if want := "$ operator-sdk 'scorecard %s'\nscorecard local\n"; sdk.String() != want {
		t.Errorf("operator-sdk with ExtraArgs:\n got %q\nwant %q", sdk.String(), want)
	}
	if err := (&Transcript{Runner: TranscriptRunner{Kubectl: "/bin/false"}}).Run(ctx, "kubectl get x"); err == nil ||
		!strings.HasPrefix(err.Error(), "kubectl get x: ") {
		t.Errorf("a command that fails: %v", err)
	}
}

func TestCheckTranscripts(t *testing.T) {
	root := t.TempDir()
	page := "<!-- transcript: one -->\n```console\n$ kubectl get oag\nnas   5s\n```\n"
	if err := os.WriteFile(filepath.Join(root, "page.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	pages := []string{"page.md"}
	if stale, err := CheckTranscripts(root, pages, map[string]string{"one": "$ kubectl get oag\nnas 2m\n"}, false); err != nil || len(stale) > 0 {
		t.Errorf("an output that differs by its ages: stale %q, error %v", stale, err)
	}
	if stale, err := CheckTranscripts(root, pages, map[string]string{"one": "$ kubectl get oag\nvideos 2m\n"}, false); err != nil ||
		len(stale) != 1 || !strings.Contains(stale[0], "+ videos <d>") {
		t.Errorf("an output that differs: stale %q, error %v", stale, err)
	}
	if _, err := CheckTranscripts(root, pages, map[string]string{}, false); err == nil || !strings.Contains(err.Error(), "no scenario of the test makes transcript one") {
		t.Errorf("a block without an output: %v", err)
	}
	if stale, err := CheckSomeTranscripts(root, pages, map[string]string{}, false); err != nil || len(stale) > 0 {
		t.Errorf("CheckSomeTranscripts, a block without an output: stale %q, error %v", stale, err)
	}
	if stale, err := CheckSomeTranscripts(root, pages, map[string]string{"one": "$ kubectl get oag\nvideos 2m\n"}, false); err != nil || len(stale) != 1 {
		t.Errorf("CheckSomeTranscripts, an output that differs: stale %q, error %v", stale, err)
	}
	if _, err := CheckTranscripts(root, pages, map[string]string{"one": "x\n", "two": "y\n"}, false); err == nil ||
		!strings.Contains(err.Error(), "has the block of transcript two") {
		t.Errorf("an output without a block: %v", err)
	}
	if _, err := CheckTranscripts(root, pages, map[string]string{"one": "$ kubectl get oag\nvideos 2m\n"}, true); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(root, "page.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "<!-- transcript: one -->\n```console\n$ kubectl get oag\nvideos 2m\n```\n"; string(written) != want {
		t.Errorf("the page written:\n got %q\nwant %q", written, want)
	}
}

func TestTranscriptPages(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"README.md", "docs/olm.md", "docs/pvc-backup.md", "docs/locks.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for suite, want := range map[string]string{
		"tests/e2e":        "README.md docs/locks.md",
		"tests/realnode":   "docs/pvc-backup.md",
		"tests/olmcatalog": "docs/olm.md",
	} {
		got, err := TranscriptPages(root, suite)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("the pages of %s: got %q, want %q", suite, got, want)
		}
	}
}
