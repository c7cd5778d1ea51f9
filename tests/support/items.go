package support

import (
	"fmt"
	"slices"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// ItemsSucceeded returns nil when the group's status shows a success of every one of items, else
// an error that names the first item without one.
func ItemsSucceeded(group *v1alpha1.OaatGroup, items []string) error {
	for _, item := range items {
		i := slices.IndexFunc(group.Status.Items, func(s v1alpha1.ItemStatus) bool { return s.Name == item })
		if i < 0 {
			return fmt.Errorf("group %s/%s has no status for item %s: %+v", group.Namespace, group.Name, item, group.Status)
		}
		if group.Status.Items[i].LastSuccess == nil {
			return fmt.Errorf("item %s of %s/%s has not succeeded: %+v", item, group.Namespace, group.Name, group.Status.Items[i])
		}
	}
	return nil
}
