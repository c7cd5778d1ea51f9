package support

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestItemsSucceeded(t *testing.T) {
	success := &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	group := func(statuses ...v1alpha1.ItemStatus) *v1alpha1.OaatGroup {
		return &v1alpha1.OaatGroup{Status: v1alpha1.OaatGroupStatus{Items: statuses}}
	}
	for _, tc := range []struct {
		name   string
		group  *v1alpha1.OaatGroup
		wantOK bool
	}{
		{"every item succeeded", group(v1alpha1.ItemStatus{Name: "a", LastSuccess: success}, v1alpha1.ItemStatus{Name: "b", LastSuccess: success}), true},
		{"an item without status", group(v1alpha1.ItemStatus{Name: "a", LastSuccess: success}), false},
		{"an item that only failed", group(v1alpha1.ItemStatus{Name: "a", LastSuccess: success}, v1alpha1.ItemStatus{Name: "b", LastFailure: success}), false},
		{"no status at all", group(), false},
	} {
		err := ItemsSucceeded(tc.group, []string{"a", "b"})
		if (err == nil) != tc.wantOK {
			t.Errorf("%s: ItemsSucceeded = %v, want ok %v", tc.name, err, tc.wantOK)
		}
	}
}
