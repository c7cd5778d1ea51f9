package docs

import (
	"strings"
	"testing"
)

// Every console block of the docs shows what commands printed on the local cluster: it is
// marked <!-- transcript: NAME --> and made by the e2e spec of tests/e2e/transcripts_test.go
// (make docs-transcripts), or for the pages that need the real node by
// tests/realnode/transcripts_test.go (make docs-transcripts-realnode), or for docs/olm.md on the
// OLM cluster by tests/olmcatalog (make docs-transcripts-olm), which fail when it no longer
// matches. A block typed by hand fails here.
func TestConsoleBlocksAreTranscripts(t *testing.T) {
	pages, err := readPages()
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, p := range pages {
		for _, b := range p.blocks {
			if b.lang != "console" {
				continue
			}
			name, isTranscript := strings.CutPrefix(b.marker, "transcript:")
			if isTranscript && strings.TrimSpace(name) != "" {
				marked++
			} else {
				t.Errorf("%s: a console block without <!-- transcript: NAME --> before it: make it a transcript of "+
					"tests/e2e/transcripts_test.go (docs/development.md, Console transcripts), or make it a sh block", b.where())
			}
		}
	}
	if marked == 0 {
		t.Error("no console block of the docs is a transcript")
	}
}
