package podbuild

import (
	"strings"
	"testing"
)

// kubeletExpand models the kubelet's $(VAR) expansion of command, args and env values
// (k8s.io/kubernetes/third_party/forked/golang/expansion): $$ gives $, $(NAME) gives the value of
// NAME in vars or stays as it is when NAME is not there, and any other $ stays as it is. Unlike
// the kubelet, it keeps invalid UTF-8 after a lone $ as it is.
func kubeletExpand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func TestKubeletExpand(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "$(A)"}
	tests := []struct{ s, want string }{
		{"", ""},
		{"plain", "plain"},
		{"$(A)/$(B)", "x/$(A)"},
		{"$(C)", "$(C)"},
		{"$$(A)", "$(A)"},
		{"$$$(A)", "$x"},
		{"$$$$", "$$"},
		{"a$b", "a$b"},
		{"$", "$"},
		{"$(A", "$(A"},
		{"$()", "$()"},
	}
	for _, tt := range tests {
		if got := kubeletExpand(tt.s, vars); got != tt.want {
			t.Errorf("kubeletExpand(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	tests := []struct {
		name string
		s    string
		item string
		want string
	}{
		{"no placeholder", "echo hello", "/srv/photos", "echo hello"},
		{"placeholder", "backup {{oaat_item}}", "/srv/photos", "backup /srv/photos"},
		{"legacy placeholder", "backup %%oaat_item%%", "/srv/photos", "backup /srv/photos"},
		{"both, repeated", "{{oaat_item}}:%%oaat_item%%:{{oaat_item}}", "x", "x:x:x"},
		{"adjacent", "{{oaat_item}}{{oaat_item}}", "ab", "abab"},
		{"whole string", "{{oaat_item}}", "a b", "a b"},
		{"incomplete placeholders", "{{oaat_item} {oaat_item}} %%oaat_item% {{ oaat_item }}", "x", "{{oaat_item} {oaat_item}} %%oaat_item% {{ oaat_item }}"},
		{"other case", "{{OAAT_ITEM}}", "x", "{{OAAT_ITEM}}"},
		{"item holding the placeholder", "a {{oaat_item}} b", "{{oaat_item}}x", "a {{oaat_item}}x b"},
		{"item holding the legacy placeholder", "a %%oaat_item%% b", "%%oaat_item%%", "a %%oaat_item%% b"},
		{"item holding the other placeholder", "{{oaat_item}}", "%%oaat_item%%{{oaat_item}}", "%%oaat_item%%{{oaat_item}}"},
		{"item completing a placeholder", "{{oaat_item}}oaat_item}}", "{{", "{{oaat_item}}"},
		{"empty string", "", "x", ""},
		{"item holding a reference", "backup {{oaat_item}}", "$(HOME)", "backup $$(HOME)"},
		{"item holding a reference, legacy placeholder", "%%oaat_item%%", "$(HOME)", "$$(HOME)"},
		{"item holding a dollar", "{{oaat_item}}", "a$b", "a$$b"},
		{"item of dollars", "{{oaat_item}}:%%oaat_item%%", "$$", "$$$$:$$$$"},
		{"item holding a reference to OAAT_ITEM", "{{oaat_item}}", "$(OAAT_ITEM)", "$$(OAAT_ITEM)"},
		{"dollars of the string kept", "$(HOME)/{{oaat_item}} $$x a$b", "$(X)", "$(HOME)/$$(X) $$x a$b"},
	}
	// vars defines the variables the items refer to, so that an unescaped reference would expand.
	vars := map[string]string{"HOME": "/root", "X": "x", "OAAT_ITEM": "self"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Substitute(tt.s, tt.item); got != tt.want {
				t.Errorf("Substitute(%q, %q) = %q, want %q", tt.s, tt.item, got, tt.want)
			}
			// The kubelet's expansion gives the item back literally.
			if got := kubeletExpand(Substitute(placeholder, tt.item), vars); got != tt.item {
				t.Errorf("kubeletExpand(Substitute(%q, %q)) = %q, want the item", placeholder, tt.item, got)
			}
		})
	}
}
