package support

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNormaliseTranscript(t *testing.T) {
	cases := []struct{ name, a, b string }{
		{"ages of kubectl get, column widths", "nas    1   3m\n", "nas 1 2d3h\n"},
		{"ages and waits of kubectl oaat status", "item1  30s ago  in 12s (CoolingOff)\n", "item1 1m5s ago in 250ms (CoolingOff)\n"},
		{"clock times of --wait", "09:07:01 Pending Queued\n", "23:59:59 Pending Queued\n"},
		{"timestamps", "nextRound=in 13h (2026-11-24T00:07:41Z)\n", "nextRound=in 9h (2027-01-02T10:00:00Z)\n"},
		{"generated names", "oaatrun.oaat.io/testsimple-nl94f created\n", "oaatrun.oaat.io/testsimple-x7k2p created\n"},
		{"trailing blank lines and spaces", "a  \n\n\n", "a\n"},
		{"operator-sdk's seconds", "INFO[0003] Created CatalogSource: c\n", "INFO[0016] Created CatalogSource: c\n"},
		{"operator-sdk's progress, terminal", "INFO[0016] Waiting\nINFO[0020]   Found CSV phase: Pending\nINFO[0033] done\n",
			"INFO[0016] Waiting\nINFO[0033] done\n"},
		{"operator-sdk's progress, piped", "time=\"2026-11-26T17:00:01Z\" level=info msg=\"Waiting\"\n" +
			"time=\"2026-11-26T17:00:02Z\" level=info msg=\"  Found CSV phase: Installing\"\n",
			"time=\"2026-11-26T17:10:01Z\" level=info msg=\"Waiting\"\n"},
		{"a long name's suffix", "2445f2e6fe26c448c9f5d7358f95678913e8612422c5050aa763203940p6jcf 0/1\n",
			"2445f2e6fe26c448c9f5d7358f95678913e8612422c5050aa763203940x2kzm 0/1\n"},
		{"InstallPlans", "Approved InstallPlan install-fls57 for\n", "Approved InstallPlan install-2xq9z for\n"},
		{"a ReplicaSet's pods", "oaat-operator-controller-manager-6444c6fdc4-qvcvg 1/1\n", "oaat-operator-controller-manager-7b9d5f8c6d-x2k4m 1/1\n"},
		{"the order of scorecard's labels", "Labels:\n\t\"test\":\"t\"\n\t\"suite\":\"olm\"\nResults:\n",
			"Labels:\n\t\"suite\":\"olm\"\n\t\"test\":\"t\"\nResults:\n"},
	}
	for _, c := range cases {
		if NormaliseTranscript(c.a) != NormaliseTranscript(c.b) {
			t.Errorf("%s: %q and %q normalise to %q and %q", c.name, c.a, c.b, NormaliseTranscript(c.a), NormaliseTranscript(c.b))
		}
	}
	keep := []struct{ name, a, b string }{
		{"items", "item1 Completed (exit 0)\n", "item2 Completed (exit 0)\n"},
		{"exit codes", "Error (exit 1)\n", "Error (exit 2)\n"},
		{"run numbers of pod names", "testsimple-srv-photos-9d7301549c-4\n", "testsimple-srv-photos-9d7301549c-5\n"},
		{"pod name hashes", "photos-srv-photos-4c94af08d6-1\n", "photos-srv-photos-4c94af08d7-1\n"},
		{"counts", "nas 1 1 1\n", "nas 1 2 1\n"},
		{"a word that looks like a suffix but has a vowel", "testsimple-photo\n", "testsimple-music\n"},
		{"empty lines inside", "a\n\nb\n", "a\nb\n"},
		{"operator-sdk's messages", "INFO[0003] Created CatalogSource: c\n", "INFO[0003] Created Subscription: c\n"},
		{"a long name's base", "2445f2e6fe26c448c9f5d7358f95678913e8612422c5050aa763203940p6jcf\n",
			"3445f2e6fe26c448c9f5d7358f95678913e8612422c5050aa763203940p6jcf\n"},
		{"operator-sdk's levels", "INFO[0003] x\n", "WARN[0003] x\n"},
		{"scorecard's labels", "Labels:\n\t\"suite\":\"olm\"\n", "Labels:\n\t\"suite\":\"oaat\"\n"},
		{"the order of lines after the labels", "Labels:\n\t\"suite\":\"olm\"\nb\na\n", "Labels:\n\t\"suite\":\"olm\"\na\nb\n"},
	}
	for _, c := range keep {
		if NormaliseTranscript(c.a) == NormaliseTranscript(c.b) {
			t.Errorf("%s: %q and %q both normalise to %q", c.name, c.a, c.b, NormaliseTranscript(c.a))
		}
	}
}

func TestTranscriptDiff(t *testing.T) {
	if d := TranscriptDiff("$ kubectl get olock\nnas   1   2d\n", "$ kubectl get olock\nnas 1 5s\n"); d != "" {
		t.Errorf("equal after normalising, yet diff:\n%s", d)
	}
	got := TranscriptDiff("NAME\nnightly\ntestsimple\n", "NAME\nnightly\nphotos\ntestsimple\n")
	want := "  NAME\n  nightly\n+ photos\n  testsimple\n"
	if got != want {
		t.Errorf("diff of an inserted line:\n%s\nwant:\n%s", got, want)
	}
	got = TranscriptDiff("a\nold\nc\n", "a\nnew\nc\n")
	want = "  a\n- old\n+ new\n  c\n"
	if got != want {
		t.Errorf("diff of a changed line:\n%s\nwant:\n%s", got, want)
	}
}

// writePage writes a page under root.
func writePage(t *testing.T, root, file, text string) {
	t.Helper()
	path := filepath.Join(root, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadAndWriteTranscripts(t *testing.T) {
	root := t.TempDir()
	const page = "# Locks\n\n<!-- transcript: locks -->\n```console\n$ kubectl get olock\nold\n```\n\n" +
		"```console\n$ kubectl get orun\nunmarked\n```\n\n- in a list:\n\n  <!-- transcript: indented -->\n  ```console\n  old\n  ```\n"
	writePage(t, root, "README.md", "no transcript\n")
	writePage(t, root, "docs/locks.md", page)
	files, err := DocPages(root)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(files, " ") != "README.md docs/locks.md" {
		t.Fatalf("pages %v", files)
	}
	blocks, err := ReadTranscripts(root, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].Name != "locks" || blocks[0].Where() != "docs/locks.md:4" ||
		blocks[0].Text != "$ kubectl get olock\nold\n" || blocks[1].Name != "indented" || blocks[1].Text != "old\n" {
		t.Fatalf("blocks %+v", blocks)
	}

	written, err := WriteTranscripts(root, files, map[string]string{"locks": "$ kubectl get olock\nnew\n", "indented": "new\n"})
	if err != nil || strings.Join(written, " ") != "locks indented" {
		t.Fatalf("written %v, %v", written, err)
	}
	got, err := os.ReadFile(filepath.Join(root, "docs", "locks.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.ReplaceAll(page, "old\n", "new\n"); string(got) != want {
		t.Errorf("page after writing:\n%s\nwant:\n%s", got, want)
	}
}

func TestTranscriptMarkerWithoutConsoleBlock(t *testing.T) {
	for name, text := range map[string]string{
		"another block": "<!-- transcript: x -->\n```sh\nls\n```\n",
		"prose":         "<!-- transcript: x -->\nsome prose\n",
		"nothing after": "<!-- transcript: x -->\n\n",
		"an open block": "<!-- transcript: x -->\n```console\n$ ls\n",
	} {
		root := t.TempDir()
		writePage(t, root, "README.md", text)
		if _, err := ReadTranscripts(root, []string{"README.md"}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCommandWords(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{"kubectl oaat status testsimple", []string{"kubectl", "oaat", "status", "testsimple"}},
		{"kubectl oaat suspend testsimple      # spec.suspend=true: a running item finishes",
			[]string{"kubectl", "oaat", "suspend", "testsimple"}},
		{`kubectl get oag nas -o jsonpath='{.status.conditions[?(@.type=="TargetAvailable")].message}'`,
			[]string{"kubectl", "get", "oag", "nas", "-o", `jsonpath={.status.conditions[?(@.type=="TargetAvailable")].message}`}},
		{`kubectl get events --field-selector "reason=Breaker Opened"`, []string{"kubectl", "get", "events", "--field-selector", "reason=Breaker Opened"}},
		{"kubectl get oag -o jsonpath='{.items[*].metadata.name}#x' # a comment",
			[]string{"kubectl", "get", "oag", "-o", "jsonpath={.items[*].metadata.name}#x"}},
		{"kubectl get oag a#b", []string{"kubectl", "get", "oag", "a#b"}},
		{"kubectl ''", []string{"kubectl", ""}},
	}
	for _, c := range cases {
		got, err := CommandWords(c.line)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("CommandWords(%q) = %q, %v; want %q", c.line, got, err, c.want)
		}
	}
	if got, err := CommandWords("kubectl get oag -o jsonpath='{.x}"); err == nil {
		t.Errorf("an unterminated quote: got %q and no error", got)
	}
}
