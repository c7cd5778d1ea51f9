package itemsource

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TakesClaims reports whether a source of the spec selects PersistentVolumeClaims.
func TakesClaims(spec *v1alpha1.OaatGroupSpec) bool {
	return slices.ContainsFunc(spec.OaatItemsFrom, func(src v1alpha1.ItemsSource) bool {
		return src.PersistentVolumeClaims != nil
	})
}

// SelectsClaim reports whether a source of the spec selects a claim with these labels, whether
// or not it is being deleted: a claim that a group selects or selected concerns it.
func SelectsClaim(spec *v1alpha1.OaatGroupSpec, claimLabels map[string]string) bool {
	for _, src := range spec.OaatItemsFrom {
		if src.PersistentVolumeClaims == nil {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(src.PersistentVolumeClaims.Selector)
		if err == nil && selector.Matches(labels.Set(claimLabels)) {
			return true
		}
	}
	return false
}

// selectClaims returns an entry for each claim that the selector matches and that is
// not being deleted, in the order of their names, or why the selector cannot be used. A nil
// selector (never admitted: selector is required) matches nothing.
func selectClaims(labelSelector *metav1.LabelSelector, claims []metav1.PartialObjectMetadata) ([]entry, string) {
	selector, err := metav1.LabelSelectorAsSelector(labelSelector)
	if err != nil {
		return nil, fmt.Sprintf("invalid PersistentVolumeClaim selector: %v", err)
	}
	var entries []entry
	for i := range claims {
		claim := &claims[i]
		if claim.DeletionTimestamp == nil && selector.Matches(labels.Set(claim.Labels)) {
			entries = append(entries, entry{item: claim.Name, where: "PersistentVolumeClaim " + claim.Name})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.item, b.item) })
	return entries, ""
}
