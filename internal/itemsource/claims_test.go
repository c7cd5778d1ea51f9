package itemsource

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// claim is the metadata of a PersistentVolumeClaim with these labels.
func claim(name string, labels map[string]string) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func claimSource(selector metav1.LabelSelector) v1alpha1.ItemsSource {
	return v1alpha1.ItemsSource{PersistentVolumeClaims: &v1alpha1.PersistentVolumeClaimItems{Selector: &selector}}
}

func TestResolveClaims(t *testing.T) {
	backup := map[string]string{"backup": "nightly"}
	deleting := claim("data-old", backup)
	deleting.DeletionTimestamp = &metav1.Time{}
	claims := []metav1.PartialObjectMetadata{
		claim("data-web", backup),
		claim("data-db", map[string]string{"backup": "nightly", "tier": "db"}),
		claim("scratch", nil),
		claim("cache", map[string]string{"backup": "never"}),
		deleting,
	}
	nightly := metav1.LabelSelector{MatchLabels: backup}
	configMaps := map[string]*corev1.ConfigMap{"keys": configMap("keys", map[string]string{"x": "", "data-db": ""})}
	checkResolve(t, Objects{Claims: claims, ConfigMaps: configMaps}, []resolveCase{
		{
			name:      "the matching claims in the order of their names, none being deleted",
			spec:      v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{claimSource(nightly)}},
			wantItems: []string{"data-db", "data-web"},
		},
		{
			name:      "an empty selector takes every claim of the namespace",
			spec:      v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{claimSource(metav1.LabelSelector{})}},
			wantItems: []string{"cache", "data-db", "data-web", "scratch"},
		},
		{
			name: "an expression",
			spec: v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{claimSource(metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "backup", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"never"}}},
			})}},
			wantItems: []string{"data-db", "data-web", "scratch"},
		},
		{
			name: "merged after the spec's items and the other sources, without duplicates",
			spec: v1alpha1.OaatGroupSpec{OaatItems: []string{"data-web", "extra"}, OaatItemsFrom: []v1alpha1.ItemsSource{
				claimSource(nightly), claimSource(metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}),
			}},
			wantItems: []string{"data-web", "extra", "data-db"},
		},
		{
			name: "merged with a ConfigMap's keys, in the order of the sources",
			spec: v1alpha1.OaatGroupSpec{OaatItems: []string{"data-web"}, OaatItemsFrom: []v1alpha1.ItemsSource{
				source("keys", ""), claimSource(nightly),
			}},
			wantItems: []string{"data-web", "data-db", "x"},
		},
		{
			name:      "no claim matches",
			spec:      v1alpha1.OaatGroupSpec{OaatItems: []string{"a"}, OaatItemsFrom: []v1alpha1.ItemsSource{claimSource(metav1.LabelSelector{MatchLabels: map[string]string{"backup": "weekly"}})}},
			wantItems: []string{"a"},
		},
		{
			name: "a selector that cannot be parsed selects none and says why",
			spec: v1alpha1.OaatGroupSpec{OaatItems: []string{"a"}, OaatItemsFrom: []v1alpha1.ItemsSource{claimSource(metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "backup", Operator: "Near"}},
			})}},
			wantItems:    []string{"a"},
			wantProblems: []string{`spec.oaatItemsFrom[0]: invalid PersistentVolumeClaim selector: "Near" is not a valid label selector operator`},
		},
	})
}

func TestSelectsClaim(t *testing.T) {
	spec := v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{
		source("list", ""),
		claimSource(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Near"}}}),
		claimSource(metav1.LabelSelector{MatchLabels: map[string]string{"backup": "nightly"}}),
	}}
	tests := []struct {
		spec   v1alpha1.OaatGroupSpec
		labels map[string]string
		want   bool
	}{
		{spec: spec, labels: map[string]string{"backup": "nightly", "tier": "db"}, want: true},
		{spec: spec, labels: map[string]string{"backup": "weekly"}, want: false},
		{spec: spec, labels: nil, want: false},
		{spec: v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{source("list", "")}}, labels: nil, want: false},
		{spec: v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{claimSource(metav1.LabelSelector{})}}, labels: nil, want: true},
	}
	for i, tt := range tests {
		if got := SelectsClaim(&tt.spec, tt.labels); got != tt.want {
			t.Errorf("case %d: SelectsClaim(%v) = %v, want %v", i, tt.labels, got, tt.want)
		}
	}
}

func TestTakesClaims(t *testing.T) {
	tests := []struct {
		spec v1alpha1.OaatGroupSpec
		want bool
	}{
		{spec: v1alpha1.OaatGroupSpec{OaatItems: []string{"a"}}, want: false},
		{spec: v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{source("list", "")}}, want: false},
		{spec: v1alpha1.OaatGroupSpec{OaatItemsFrom: []v1alpha1.ItemsSource{source("list", ""), claimSource(metav1.LabelSelector{})}}, want: true},
	}
	for i, tt := range tests {
		if got := TakesClaims(&tt.spec); got != tt.want {
			t.Errorf("case %d: TakesClaims() = %v, want %v", i, got, tt.want)
		}
	}
}
