package support

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The console transcripts of the documentation are executed, not transcribed: a ```console block
// right after the comment <!-- transcript: NAME --> holds what the commands of the transcript NAME
// printed on the local cluster. A test writes the blocks (WriteTranscripts) or compares them with
// what the commands print now (TranscriptDiff), after both sides went through
// NormaliseTranscript, so that ages, clocks and generated names may differ from run to run while
// everything else must match.

// transcriptMarkerRE is the comment naming the transcript of the next ```console block.
var transcriptMarkerRE = regexp.MustCompile(`^<!--\s*transcript:\s*([a-z0-9-]+)\s*-->$`)

// TranscriptBlock is a marked console block of a page.
type TranscriptBlock struct {
	// Name is the transcript's name, from the marker.
	Name string
	// File is the page, relative to the repository's root; Line the line of the opening fence.
	File string
	Line int
	// Text is the block's content, each line ending in a newline.
	Text string
}

// Where names the block in a failure message.
func (b TranscriptBlock) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// DocPages lists README.md and the Markdown files under docs/, relative to root.
func DocPages(root string) ([]string, error) {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	return files, err
}

// ReadTranscripts returns the marked console blocks of the pages, in page order. A marker that
// is not followed by a ```console block (blank lines aside) is an error.
func ReadTranscripts(root string, files []string) ([]TranscriptBlock, error) {
	var blocks []TranscriptBlock
	for _, file := range files {
		err := editTranscripts(root, file, func(b TranscriptBlock) string {
			blocks = append(blocks, b)
			return b.Text
		})
		if err != nil {
			return nil, err
		}
	}
	return blocks, nil
}

// WriteTranscripts replaces the content of each marked block of the pages whose name is a key of
// outputs by its value (which must end in a newline), and returns the names it wrote.
func WriteTranscripts(root string, files []string, outputs map[string]string) ([]string, error) {
	var written []string
	for _, file := range files {
		err := editTranscripts(root, file, func(b TranscriptBlock) string {
			out, ok := outputs[b.Name]
			if !ok {
				return b.Text
			}
			written = append(written, b.Name)
			return out
		})
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// editTranscripts calls edit with each marked block of the page and puts what it returns in the
// block's place; the file is written only when something changed.
func editTranscripts(root, file string, edit func(TranscriptBlock) string) error {
	path := filepath.Join(root, file)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	var out strings.Builder
	pending := "" // the name of the last marker, until its block
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		out.WriteString(line)
		if m := transcriptMarkerRE.FindStringSubmatch(trimmed); m != nil {
			pending = m[1]
			continue
		}
		if pending == "" || trimmed == "" {
			continue
		}
		if trimmed != "```console" {
			return fmt.Errorf("%s:%d: the marker of transcript %s must be followed by a ```console block", file, i+1, pending)
		}
		end := slices.IndexFunc(lines[i+1:], func(l string) bool { return strings.TrimSpace(l) == "```" })
		if end < 0 {
			return fmt.Errorf("%s:%d: the block of transcript %s is not closed", file, i+1, pending)
		}
		// A block in a list item is indented: its text is not.
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		var text strings.Builder
		for _, l := range lines[i+1 : i+1+end] {
			text.WriteString(strings.TrimPrefix(l, indent))
		}
		edited := edit(TranscriptBlock{Name: pending, File: file, Line: i + 1, Text: text.String()})
		for _, l := range strings.SplitAfter(edited, "\n") {
			if strings.TrimSpace(l) != "" {
				l = indent + l
			}
			out.WriteString(l)
		}
		i += end
		pending = ""
	}
	if pending != "" {
		return fmt.Errorf("%s: the marker of transcript %s has no block after it", file, pending)
	}
	if out.String() == string(data) {
		return nil
	}
	return os.WriteFile(path, []byte(out.String()), 0o644)
}

// The volatile parts of a transcript, each replaced by a placeholder of its kind.
var volatileParts = []struct {
	re          *regexp.Regexp
	placeholder string
}{
	// operator-sdk's progress lines while it waits (logrus's, indented: the phases of a CSV it
	// happened to see), in its terminal format and in the one it writes to a pipe.
	{regexp.MustCompile(`(?m)^([A-Z]{4}\[\d+\]|time="[^"]*" level=\w+ msg=") {2}.*\n`), ""},
	// The seconds since start of logrus's terminal format: INFO[0003].
	{regexp.MustCompile(`\b([A-Z]{4})\[\d+\]`), "$1[<t>]"},
	// Timestamps, before the clock times inside them.
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`), "<clock>"},
	// The random suffix of a generated name (the OaatRuns of kubectl oaat run): five characters
	// of the API server's alphabet, which has no vowels.
	{regexp.MustCompile(`\b([a-z0-9]+)-[bcdfghjklmnpqrstvwxz2-9]{5}\b`), "$1-<id>"},
	// The same suffix after a generated name's base cut to 58 characters, without its hyphen
	// (a Job's pod whose Job has a 63-character name: OLM's bundle unpack Job).
	{regexp.MustCompile(`\b([a-z0-9-]{58})[bcdfghjklmnpqrstvwxz2-9]{5}\b`), "$1<id>"},
	// The pod-template-hash of a ReplicaSet's pods, before their suffix: NAME-6444c6fdc4-<id>.
	{regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2-9]{6,10}-<id>`), "-<hash>-<id>"},
	// Ages and durations, as kubectl and kubectl oaat print them: 5s, 3m, 2d, 1m30s, 250ms.
	{regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m|h|d|y)(\d+(\.\d+)?(ms|s|m|h|d))*\b`), "<d>"},
	// Column widths follow the values.
	{regexp.MustCompile(`[ \t]+`), " "},
}

// NormaliseTranscript replaces the parts of a transcript that change from run to run (ages,
// durations, clock times, timestamps, the random suffixes of generated names) by placeholders,
// collapses runs of blanks (table columns are as wide as their values) and trims each line.
func NormaliseTranscript(s string) string {
	for _, v := range volatileParts {
		s = v.re.ReplaceAllString(s, v.placeholder)
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	sortLabels(lines)
	return strings.Join(lines, "\n") + "\n"
}

// sortLabels sorts each list of "key":"value" lines under a "Labels:" line: operator-sdk
// scorecard's text output prints a test's labels from a map, in Go's random order.
func sortLabels(lines []string) {
	for i := 0; i < len(lines); i++ {
		if lines[i] != "Labels:" {
			continue
		}
		end := i + 1
		for end < len(lines) && scorecardLabelRE.MatchString(lines[end]) {
			end++
		}
		slices.Sort(lines[i+1 : end])
		i = end - 1
	}
}

// scorecardLabelRE is a label line of operator-sdk scorecard's text output, trimmed: "suite":"olm".
var scorecardLabelRE = regexp.MustCompile(`^"[^"]*":"[^"]*"$`)

// TranscriptDiff compares the page's transcript with what the commands printed, both normalised,
// and returns "" when they match, else every line of both: "- " the page's only, "+ " the
// commands' only, "  " both (a longest common subsequence).
func TranscriptDiff(page, printed string) string {
	want := strings.Split(strings.TrimSuffix(NormaliseTranscript(page), "\n"), "\n")
	got := strings.Split(strings.TrimSuffix(NormaliseTranscript(printed), "\n"), "\n")
	if slices.Equal(want, got) {
		return ""
	}
	// common[i][j] is the length of the longest common subsequence of want[i:] and got[j:].
	common := make([][]int, len(want)+1)
	for i := range common {
		common[i] = make([]int, len(got)+1)
	}
	for i := len(want) - 1; i >= 0; i-- {
		for j := len(got) - 1; j >= 0; j-- {
			if want[i] == got[j] {
				common[i][j] = common[i+1][j+1] + 1
			} else {
				common[i][j] = max(common[i+1][j], common[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case i < len(want) && j < len(got) && want[i] == got[j]:
			b.WriteString("  " + want[i] + "\n")
			i, j = i+1, j+1
		case j == len(got) || (i < len(want) && common[i+1][j] >= common[i][j+1]):
			b.WriteString("- " + want[i] + "\n")
			i++
		default:
			b.WriteString("+ " + got[j] + "\n")
			j++
		}
	}
	return b.String()
}

// CommandWords splits a command line of a transcript into its words as a POSIX shell would for
// the simple lines the pages show: blanks separate words, '...' and "..." quote (no escapes, no
// expansion; the quotes are not part of the word), and an unquoted # that starts a word begins
// the page's comment, which is dropped. An unterminated quote is an error.
func CommandWords(line string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("command %q: unterminated %c", line, quote)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}
