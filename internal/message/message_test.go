package message

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestList(t *testing.T) {
	tests := []struct {
		entries []string
		n       int
		want    string
	}{
		{entries: nil, n: 2, want: ""},
		{entries: []string{"a"}, n: 2, want: "a"},
		{entries: []string{"a", "b"}, n: 2, want: "a; b"},
		{entries: []string{"a", "b", "c", "d"}, n: 2, want: "a; b; and 2 more"},
		{entries: []string{"a", "b"}, n: 0, want: "and 2 more"},
	}
	for _, tt := range tests {
		if got := ListFirst(tt.entries, tt.n, "; "); got != tt.want {
			t.Errorf("ListFirst(%q, %d) = %q, want %q", tt.entries, tt.n, got, tt.want)
		}
	}
	many := make([]string, 1000)
	for i := range many {
		many[i] = strings.Repeat("x", 300)
	}
	got := List(many, "; ")
	if !strings.HasSuffix(got, "; and 995 more") || len(got) > MaxListed*302+20 {
		t.Fatalf("List of 1000 entries: %d bytes ending %q", len(got), got[len(got)-20:])
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("short", 10); got != "short" {
		t.Fatalf("Truncate kept %q", got)
	}
	if got := Truncate("0123456789", 10); got != "0123456789" {
		t.Fatalf("Truncate at the limit = %q", got)
	}
	if got := Truncate("0123456789a", 10); got != "0123456"+ellipsis || len(got) != 10 {
		t.Fatalf("Truncate = %q (%d bytes)", got, len(got))
	}
	// A multi-byte character is never split.
	text := strings.Repeat("é", 10) // 20 bytes
	for limit := 3; limit < 20; limit++ {
		got := Truncate(text, limit)
		if len(got) > limit || !utf8.ValidString(got) || !strings.HasSuffix(got, ellipsis) {
			t.Fatalf("Truncate(%d) = %q (%d bytes)", limit, got, len(got))
		}
	}
	if got := Truncate("abcdef", 2); got != "" {
		t.Fatalf("Truncate below the ellipsis' length = %q", got)
	}
	long := strings.Repeat("y", 40000)
	if len(Condition(long)) != MaxCondition || len(Event(long)) != MaxEvent || len(OnDemandRun(long)) != MaxOnDemandRun {
		t.Fatal("a bound is not applied")
	}
}
