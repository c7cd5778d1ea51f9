package docs

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	// linkRE finds a Markdown link or image: its target, up to a space (a title) or ")".
	linkRE = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// headingRE is an ATX heading.
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	// slugDropRE are the characters GitHub drops from a heading to make its anchor.
	slugDropRE = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// slug is GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
func slug(heading string) string {
	s := strings.ToLower(heading)
	s = slugDropRE.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "-")
}

// anchors returns the anchors of a page's headings; a repeated heading gets -1, -2... as on
// GitHub.
func anchors(p page) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range p.prose {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestLinks checks that every relative link of the docs leads to a file or directory of the
// repository and, into a Markdown page, to one of its headings.
func TestLinks(t *testing.T) {
	pages, err := readPages()
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string]page{}
	for _, p := range pages {
		byFile[p.file] = p
	}
	count := 0
	for _, p := range pages {
		for i, line := range p.prose {
			// Code spans are not links.
			line = inlineCodeRE.ReplaceAllString(line, "")
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				count++
				where := p.file + ":" + strconv.Itoa(p.proseLines[i])
				file, anchor, _ := strings.Cut(target, "#")
				dest := p.file
				if file != "" {
					dest = path.Clean(path.Join(path.Dir(p.file), file))
					if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(dest))); err != nil {
						t.Errorf("%s: link %s: %v", where, target, err)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				destPage, ok := byFile[dest]
				if !ok {
					if destPage, err = readPage(dest); err != nil {
						t.Errorf("%s: link %s: %v", where, target, err)
						continue
					}
					byFile[dest] = destPage
				}
				if !anchors(destPage)[anchor] {
					t.Errorf("%s: link %s: %s has no heading with the anchor #%s", where, target, dest, anchor)
				}
			}
		}
	}
	if count == 0 {
		t.Error("no relative link found in the docs: the check reads nothing")
	}
	t.Logf("%d relative links checked", count)
}
