package podbuild

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

var (
	longItem  = strings.Repeat("abcdefghij", 20)
	longGroup = strings.Repeat("g", 63)
)

func TestName(t *testing.T) {
	tests := []struct {
		group string
		item  string
		run   int64
		want  string
	}{
		{"backups", "/srv/photos", 3, "backups-srv-photos-3314743f50-3"},
		{"backups", "srv-photos", 3, "backups-srv-photos-24a190e9d9-3"},
		{"backups", "SRV/Photos", 1, "backups-srv-photos-1a6ced31ea-1"},
		{"ab", "c", 1, "ab-c-6c032e631d-1"},
		{"a", "bc", 1, "a-bc-40bb547d93-1"},
		{"backups", longItem, 1, "backups-abcdefghijabcdefghijabcdefghijabcdefghijab-a3f28d7789-1"},
		{longGroup, longItem, math.MaxInt64, "gggggggggggggggggggggggggggggggg-54a255df9b-9223372036854775807"},
		{longGroup, "x", 1, "gggggggggggggggggggggggggggggggggggggggggggggggggg-f219b55579-1"},
		{"backups", "Фото/été 📷", 12, "backups-t-0e3beb90a9-12"},
		{"b", "..", 1, "b-78bf0ea714-1"},
		{"b", "-", 1, "b-6fcbc478ba-1"},
		{"b", "A_B", 1, "b-a-b-b041f6171e-1"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%d", tt.group, tt.item, tt.run), func(t *testing.T) {
			got := Name(tt.group, tt.item, tt.run)
			if got != tt.want {
				t.Errorf("Name(%q, %q, %d) = %q, want %q", tt.group, tt.item, tt.run, got, tt.want)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("Name(%q, %q, %d) = %q is not a DNS-1123 label: %v", tt.group, tt.item, tt.run, got, errs)
			}
		})
	}
}

func TestNameDistinct(t *testing.T) {
	type key struct {
		group, item string
		run         int64
	}
	var keys []key
	for _, group := range []string{"a", "ab", "backups", longGroup} {
		for _, item := range []string{
			"c", "bc", "/srv/photos", "srv-photos", "SRV/Photos", "srv photos", "srv--photos",
			longItem, longItem + "x", longItem[:199] + "y", "..", "-", "A_B", "a-b", "x", "x1",
		} {
			for _, run := range []int64{1, 2, 10, 11, math.MaxInt64} {
				keys = append(keys, key{group, item, run})
			}
		}
	}
	seen := make(map[string]key, len(keys))
	for _, k := range keys {
		name := Name(k.group, k.item, k.run)
		if prev, ok := seen[name]; ok {
			t.Errorf("Name(%q, %q, %d) = Name(%q, %q, %d) = %q", k.group, k.item, k.run, prev.group, prev.item, prev.run, name)
		}
		seen[name] = k
	}
}

func TestItemLabelValue(t *testing.T) {
	tests := []struct {
		item string
		want string
	}{
		{"A_B", "A_B"},
		{"srv.photos", "srv.photos"},
		{strings.Repeat("x", 63), strings.Repeat("x", 63)},
		{strings.Repeat("x", 64), strings.Repeat("x", 52) + "-7ce100971f"},
		{"/srv/photos", "srv-photos-79bc008a1a"},
		{longItem, "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijab-5d21f71a66"},
		{"..", "5ec1f7e700"},
		{"-", "3973e022e9"},
		{"_a_", "a-dee5fddd24"},
		{"Фото/été 📷", "t-65fb35ce1c"},
		{"a b", "a-b-c8687a08aa"},
		{"a/b", "a-b-c14cddc033"},
		{"a  b", "a-b-6e12db7320"},
	}
	for _, tt := range tests {
		t.Run(tt.item, func(t *testing.T) {
			got := ItemLabelValue(tt.item)
			if got != tt.want {
				t.Errorf("ItemLabelValue(%q) = %q, want %q", tt.item, got, tt.want)
			}
			if errs := content.IsLabelValue(got); len(errs) > 0 {
				t.Errorf("ItemLabelValue(%q) = %q is not a label value: %v", tt.item, got, errs)
			}
		})
	}
}

// nonDNSLabel matches the characters that toGroup drops.
var nonDNSLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// toGroup maps a fuzzed string to a valid OaatGroup name: a DNS-1123 label of at most 63
// characters.
func toGroup(s string) string {
	s = strings.Trim(nonDNSLabel.ReplaceAllString(strings.ToLower(s), ""), "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	if s == "" {
		return "g"
	}
	return s
}

// toRun maps a fuzzed number to a run number, at least 1.
func toRun(n int64) int64 {
	return max(n&math.MaxInt64, 1)
}

func FuzzName(f *testing.F) {
	items := []string{"/srv/photos", longItem, "Фото/été 📷", "..", "-", "A_B", "srv-photos", "x"}
	for i, item := range items {
		f.Add("backups", item, int64(i+1), items[(i+1)%len(items)], int64(i+1))
		f.Add(longGroup, item, int64(math.MaxInt64), item, int64(1))
	}
	f.Fuzz(func(t *testing.T, group, item string, run int64, item2 string, run2 int64) {
		if item == "" || item2 == "" {
			t.Skip("items are not empty")
		}
		group, run, run2 = toGroup(group), toRun(run), toRun(run2)

		name, name2 := Name(group, item, run), Name(group, item2, run2)
		for _, n := range []string{name, name2} {
			if errs := validation.IsDNS1123Label(n); len(errs) > 0 || len(n) > 63 {
				t.Errorf("Name(%q, ...) = %q (%d characters) is not a DNS-1123 label: %v", group, n, len(n), errs)
			}
		}
		if (item == item2 && run == run2) != (name == name2) {
			t.Errorf("Name(%q, %q, %d) = %q and Name(%q, %q, %d) = %q", group, item, run, name, group, item2, run2, name2)
		}

		value, value2 := ItemLabelValue(item), ItemLabelValue(item2)
		for _, v := range []string{value, value2} {
			if errs := content.IsLabelValue(v); len(errs) > 0 || len(v) > 63 {
				t.Errorf("ItemLabelValue(...) = %q (%d characters) is not a label value: %v", v, len(v), errs)
			}
		}
		if len(content.IsLabelValue(item)) == 0 && value != item {
			t.Errorf("ItemLabelValue(%q) = %q, want the item itself: it is a valid label value", item, value)
		}
		if (item == item2) != (value == value2) {
			t.Errorf("ItemLabelValue(%q) = %q and ItemLabelValue(%q) = %q", item, value, item2, value2)
		}
	})
}
