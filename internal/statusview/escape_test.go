package statusview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestItemEscapesWhatATerminalWouldInterpret(t *testing.T) {
	tests := map[string]string{
		"/srv/photos":          "/srv/photos",
		"my photos":            "my photos",
		"café":                 "café",
		"a\tb":                 `"a\tb"`,
		"\x1b[2Jgone":          `"\x1b[2Jgone"`,
		"line\nbreak":          `"line\nbreak"`,
		"bell\a":               `"bell\a"`,
		"bidi\u202eevil":       `"bidi\u202eevil"`,
		"\"quoted\" and plain": `"quoted" and plain`,
	}
	for item, want := range tests {
		if got := Item(item); got != want {
			t.Errorf("Item(%q) = %s, want %s", item, got, want)
		}
	}
}

// A table keeps its columns and writes no control character, whatever the items are.
func TestWriteEscapesItems(t *testing.T) {
	now := builders.T0
	g := builders.Group("tab\there", "\x1b]0;owned\a").Named("g").ItemStatus(v1alpha1.ItemStatus{Name: "tab\there"}, v1alpha1.ItemStatus{Name: "\x1b]0;owned\a"}).
		RunningIn("tab\there", "g-tab-1", builders.At(0)).Obj()
	runs := []v1alpha1.OaatRun{{Spec: v1alpha1.OaatRunSpec{OaatGroup: "g", Item: "\x1b[31mred"}}}
	var out bytes.Buffer
	if err := Write(&out, g, runs, now); err != nil {
		t.Fatal(err)
	}
	t.Logf("output:\n%s", out.String())
	for _, r := range out.String() {
		if r < ' ' && r != '\n' || r == 0x7f {
			t.Fatalf("control character %q in the output:\n%q", r, out.String())
		}
	}
	for _, want := range []string{`running="tab\there"`, `  "tab\there"  `, `"\x1b]0;owned\a"`, `"\x1b[31mred"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
}
