package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The page has a section per const block, headed by its comment, and a row per name with its
// value and its godoc (the "Name: " of a reason's comment left out); the file's own comment
// opens it, and the first block's comment heads only its section.
func TestRender(t *testing.T) {
	src := filepath.Join(t.TempDir(), "conventions.go")
	if err := os.WriteFile(src, []byte(`package v1alpha1

// The names of the API.
//
// Words:
//   - item: a string.

// Reasons of the Ready condition.
const (
	// ReasonReady: the spec is valid.
	ReasonReady = "Ready"
	// ReasonBad: a | b.
	ReasonBad = "Bad"
)

// LeaderElectionID is the Lease's name.
const LeaderElectionID = "x.oaat.io"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	page, err := render(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"The names of the API.\n\nWords:\n- item: a string.\n\n## Reasons of the Ready condition\n",
		"| `ReasonReady` | `Ready` | the spec is valid. |\n",
		"| `ReasonBad` | `Bad` | a \\| b. |\n",
		"## LeaderElectionID\n\n| name | value | meaning |\n| --- | --- | --- |\n| `LeaderElectionID` | `x.oaat.io` | LeaderElectionID is the Lease's name. |\n",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Count(string(page), "Reasons of the Ready condition") != 1 {
		t.Errorf("the first block's comment is not only its heading:\n%s", page)
	}
}
