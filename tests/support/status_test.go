package support

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestItemStatusAndNames(t *testing.T) {
	group := &v1alpha1.OaatGroup{Status: v1alpha1.OaatGroupStatus{Items: []v1alpha1.ItemStatus{
		{Name: "b", LastPodName: "pod-b"}, {Name: "a", LastPodName: "pod-a"},
	}}}
	if got := ItemNames(group); !reflect.DeepEqual(got, []string{"b", "a"}) {
		t.Errorf("ItemNames = %v, want [b a]", got)
	}
	it := ItemStatus(group, "a")
	if it == nil || it.LastPodName != "pod-a" {
		t.Fatalf("ItemStatus(a) = %+v, want the entry of a", it)
	}
	if it != &group.Status.Items[1] {
		t.Error("ItemStatus(a) does not point into the group's status")
	}
	if it := ItemStatus(group, "c"); it != nil {
		t.Errorf("ItemStatus(c) = %+v, want nil", it)
	}
	if got := ItemNames(&v1alpha1.OaatGroup{}); got == nil || len(got) != 0 {
		t.Errorf("ItemNames of no items = %#v, want an empty list", got)
	}
}

func TestPodNames(t *testing.T) {
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "y"}},
	}
	if got := PodNames(pods); !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("PodNames = %v, want [x y]", got)
	}
	if got := PodNames(nil); got == nil || len(got) != 0 {
		t.Errorf("PodNames(nil) = %#v, want an empty list", got)
	}
}
