// Package docs checks that the documentation (README.md and docs/**/*.md) cannot drift from the
// project: its YAML is accepted by a real kube-apiserver, the make targets and kubectl oaat
// commands it names exist, and its relative links and anchors lead somewhere.
package docs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// repoRoot is the repository's root, relative to this package.
const repoRoot = "../.."

// block is a fenced code block of a Markdown file.
type block struct {
	// file is the Markdown file, relative to the repository's root.
	file string
	// line is the line of the opening fence, from 1.
	line int
	// lang is the info string after the opening fence ("yaml", "sh", ...).
	lang string
	// marker is the HTML comment on the last non-empty line before the fence, without "<!--"
	// and "-->", or "".
	marker string
	// text is the block's content.
	text string
}

// where names the block in a failure message.
func (b block) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// page is a Markdown file split into its fenced blocks and its prose (the lines outside them).
type page struct {
	// file is the file, relative to the repository's root.
	file string
	// blocks are its fenced code blocks, in order.
	blocks []block
	// prose are its lines outside fenced blocks; prose[i] is line proseLines[i].
	prose      []string
	proseLines []int
}

var markerRE = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// markdownFiles lists README.md and every Markdown file under docs/, relative to the
// repository's root: the pages whose transcripts the e2e suite checks too.
func markdownFiles() ([]string, error) { return support.DocPages(repoRoot) }

// readPage reads a Markdown file. Fences are lines starting with ``` (indented ones too, as in a
// list item); a block ends at the next fence line of the same indentation.
func readPage(file string) (page, error) {
	f, err := os.Open(filepath.Join(repoRoot, file))
	if err != nil {
		return page{}, err
	}
	defer func() { _ = f.Close() }()

	p := page{file: file}
	var (
		open       *block
		indent     string
		body       []string
		lastMarker string
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if open != nil {
			if trimmed == "```" && strings.HasPrefix(line, indent) {
				open.text = strings.Join(body, "\n") + "\n"
				p.blocks = append(p.blocks, *open)
				open, body = nil, nil
				continue
			}
			body = append(body, strings.TrimPrefix(line, indent))
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
			open = &block{file: file, line: n, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), marker: lastMarker}
			lastMarker = ""
			continue
		}
		p.prose = append(p.prose, line)
		p.proseLines = append(p.proseLines, n)
		if trimmed != "" {
			lastMarker = ""
			if m := markerRE.FindStringSubmatch(trimmed); m != nil {
				lastMarker = m[1]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return page{}, err
	}
	if open != nil {
		return page{}, fmt.Errorf("%s:%d: code block not closed", file, open.line)
	}
	return p, nil
}

// readPages reads every documentation page.
func readPages() ([]page, error) {
	files, err := markdownFiles()
	if err != nil {
		return nil, err
	}
	pages := make([]page, 0, len(files))
	for _, file := range files {
		p, err := readPage(file)
		if err != nil {
			return nil, err
		}
		pages = append(pages, p)
	}
	return pages, nil
}

var inlineCodeRE = regexp.MustCompile("`([^`]+)`")

// snippet is a piece of code the docs show: a line of a shell or console block, or an inline
// code span of the prose (which may span lines).
type snippet struct {
	where string
	text  string
}

// codeSnippets returns the lines of the page's shell and console blocks and its inline code spans.
func (p page) codeSnippets() []snippet {
	var out []snippet
	for _, b := range p.blocks {
		switch b.lang {
		case "sh", "bash", "console", "shell":
		default:
			continue
		}
		for i, line := range strings.Split(b.text, "\n") {
			out = append(out, snippet{where: fmt.Sprintf("%s:%d", p.file, b.line+1+i), text: line})
		}
	}
	return append(out, p.proseSnippets()...)
}

// proseSnippets returns the inline code spans of the page's prose. Inline code may wrap across
// lines of a paragraph: the prose is joined, the line numbers kept.
func (p page) proseSnippets() []snippet {
	var out []snippet
	joined := strings.Join(p.prose, "\n")
	for _, m := range inlineCodeRE.FindAllStringSubmatchIndex(joined, -1) {
		line := p.proseLines[strings.Count(joined[:m[0]], "\n")]
		out = append(out, snippet{where: fmt.Sprintf("%s:%d", p.file, line), text: joined[m[2]:m[3]]})
	}
	return out
}
