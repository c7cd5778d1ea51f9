package perfkit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Report collects the lines of a program's report; they are printed as they come and then
// written, as one section, to docs/performance.md.
type Report struct {
	out   io.Writer
	lines []string
}

// NewReport returns a report that prints to out.
func NewReport(out io.Writer) *Report { return &Report{out: out} }

// Printf adds a line (or several) to the report and prints it.
func (r *Report) Printf(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	fmt.Fprintln(r.out, text)
	r.lines = append(r.lines, strings.Split(text, "\n")...)
}

// WriteSection replaces the section named name of the Markdown file at path with the report, as
// a code block, between the marker lines <!-- name:begin --> and <!-- name:end -->; without them
// (a new file, or markers removed) the section is appended. The rest of the file, the hand-written
// analysis, is kept; a marker quoted within a line of text is not a marker.
func (r *Report) WriteSection(path, name string) error {
	begin, end := "\n<!-- "+name+":begin -->\n", "\n<!-- "+name+":end -->\n"
	section := begin + "```text\n" + strings.Join(r.lines, "\n") + "\n```" + end
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	doc := "\n" + string(data) // so that a marker on the first line is a line too
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i >= 0 && j > i {
		doc = doc[:i] + section + doc[j+len(end):]
	} else {
		doc = strings.TrimRight(doc, "\n") + "\n" + section
	}
	return os.WriteFile(path, []byte(strings.TrimLeft(doc, "\n")), 0o644)
}
