package itemsource

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// configMap is a ConfigMap that opts in as an item source.
func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: map[string]string{v1alpha1.LabelItemSource: "true"},
	}, Data: data}
}

func source(name, key string) v1alpha1.ItemsSource {
	return v1alpha1.ItemsSource{ConfigMap: &v1alpha1.ConfigMapItems{Name: name, Key: key}}
}

func TestResolve(t *testing.T) {
	long := strings.Repeat("x", 254)
	configMaps := map[string]*corev1.ConfigMap{
		"keys":   configMap("keys", map[string]string{"zeta": "", "alpha": "ignored", "b": "1"}),
		"secret": {ObjectMeta: metav1.ObjectMeta{Name: "secret"}, Data: map[string]string{"password": "hunter2"}},
		"other":  {ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{v1alpha1.LabelItemSource: "yes"}}, Data: map[string]string{"k": ""}},
		"lines":  configMap("lines", map[string]string{"list": "  /srv/photos \n\n# a comment\nb\n" + long + "\n/srv/music\n"}),
	}
	checkResolve(t, Objects{ConfigMaps: configMaps}, []resolveCase{
		{name: "spec only", spec: v1alpha1.OaatGroupSpec{OaatItems: []string{"b", "a"}}, wantItems: []string{"b", "a"}},
		{
			name:      "each key, sorted, after the spec's items, without duplicates",
			spec:      v1alpha1.OaatGroupSpec{OaatItems: []string{"b"}, OaatItemsFrom: []v1alpha1.ItemsSource{source("keys", "")}},
			wantItems: []string{"b", "alpha", "zeta"},
		},
		{
			name:         "each line of a key, trimmed, comments and blank lines skipped, a long line reported",
			spec:         v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{source("lines", "list"), source("keys", "")}},
			wantItems:    []string{"/srv/photos", "b", "/srv/music", "alpha", "zeta"},
			wantProblems: []string{`spec.oaatItemsFrom[0]: line 5 of key "list" of ConfigMap lines is 254 characters long, more than 253`},
		},
		{
			name:      "missing ConfigMap and key",
			spec:      v1alpha1.OaatGroupSpec{OaatItems: []string{"a"}, OaatItemsFrom: []v1alpha1.ItemsSource{source("gone", ""), source("lines", "nope")}},
			wantItems: []string{"a"},
			wantProblems: []string{
				"spec.oaatItemsFrom[0]: ConfigMap gone not found",
				`spec.oaatItemsFrom[1]: ConfigMap lines has no key "nope"`,
			},
		},
		{
			name:      "ConfigMaps without the opt-in label (or another value) are refused, their data unread",
			spec:      v1alpha1.OaatGroupSpec{OaatItems: []string{"a"}, OaatItemsFrom: []v1alpha1.ItemsSource{source("secret", ""), source("other", "k")}},
			wantItems: []string{"a"},
			wantProblems: []string{
				`spec.oaatItemsFrom[0]: ConfigMap secret is not an item source: it lacks the label oaat.io/item-source="true"`,
				`spec.oaatItemsFrom[1]: ConfigMap other is not an item source: it lacks the label oaat.io/item-source="true"`,
			},
		},
	})
}

// resolveCase is a spec and what Resolve must make of it.
type resolveCase struct {
	name         string
	spec         v1alpha1.OaatGroupSpec
	wantItems    []string
	wantProblems []string
}

// checkResolve resolves each case's spec with the objects and compares the whole result.
func checkResolve(t *testing.T, objects Objects, tests []resolveCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, problems := Resolve(&tt.spec, objects)
			if !slices.Equal(items, tt.wantItems) || !slices.Equal(problems, tt.wantProblems) {
				t.Fatalf("Resolve() = %q, %q\nwant %q, %q", items, problems, tt.wantItems, tt.wantProblems)
			}
		})
	}
}

func TestResolveCapsTheItems(t *testing.T) {
	lines := make([]string, MaxItems+5)
	for i := range lines {
		lines[i] = fmt.Sprintf("item-%d", i)
	}
	spec := v1alpha1.OaatGroupSpec{OaatItems: []string{"first"}, OaatItemsFrom: []v1alpha1.ItemsSource{source("many", "list")}}
	items, problems := Resolve(&spec, Objects{ConfigMaps: map[string]*corev1.ConfigMap{"many": configMap("many", map[string]string{"list": strings.Join(lines, "\n")})}})
	if len(items) != MaxItems || items[0] != "first" {
		t.Fatalf("%d items starting with %q", len(items), items[0])
	}
	if want := []string{"6 more items skipped: a group has at most 1000"}; !slices.Equal(problems, want) {
		t.Fatalf("problems = %q, want %q", problems, want)
	}
}

func TestNames(t *testing.T) {
	spec := v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{
		source("a", "x"), claimSource(metav1.LabelSelector{}), source("b", ""), source("a", "y"),
	}}
	if got := Names(&spec); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Names() = %v", got)
	}
}
