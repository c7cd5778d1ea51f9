package controllers

import (
	"slices"
	"testing"
)

func TestWatchNamespaces(t *testing.T) {
	tests := map[string][]string{
		"":          nil,
		"team-a":    {"team-a"},
		"a,b":       {"a", "b"},
		" a , ,b, ": {"a", "b"},
		",":         nil,
	}
	for value, want := range tests {
		if got := WatchNamespaces(value); !slices.Equal(got, want) {
			t.Errorf("WatchNamespaces(%q) = %q, want %q", value, got, want)
		}
	}
}

func TestCacheOptionsNamespaces(t *testing.T) {
	if opts := CacheOptions(); opts.DefaultNamespaces != nil {
		t.Errorf("no namespaces: DefaultNamespaces = %v, want all (nil)", opts.DefaultNamespaces)
	}
	opts := CacheOptions("a", "b")
	if len(opts.DefaultNamespaces) != 2 {
		t.Errorf("DefaultNamespaces = %v, want a and b", opts.DefaultNamespaces)
	}
	for _, ns := range []string{"a", "b"} {
		if _, ok := opts.DefaultNamespaces[ns]; !ok {
			t.Errorf("DefaultNamespaces lacks %q", ns)
		}
	}
}
