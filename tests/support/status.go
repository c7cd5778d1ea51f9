package support

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// ItemStatus returns the status entry of item in the group, nil when there is none.
func ItemStatus(group *v1alpha1.OaatGroup, item string) *v1alpha1.ItemStatus {
	for i := range group.Status.Items {
		if group.Status.Items[i].Name == item {
			return &group.Status.Items[i]
		}
	}
	return nil
}

// ItemNames returns the names of the group's status entries, in their order.
func ItemNames(group *v1alpha1.OaatGroup) []string {
	names := make([]string, 0, len(group.Status.Items))
	for _, it := range group.Status.Items {
		names = append(names, it.Name)
	}
	return names
}

// PodNames returns the names of the pods, in their order.
func PodNames(pods []corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}
