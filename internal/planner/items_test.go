package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestDecideTakesItemsFromConfigMaps(t *testing.T) {
	g := newGroup("spec")
	g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{
		{ConfigMap: v1alpha1.ConfigMapItems{Name: "dirs", Key: "list"}},
		{ConfigMap: v1alpha1.ConfigMapItems{Name: "missing"}},
	}
	in := input(g, 0)
	in.ConfigMaps = map[string]*corev1.ConfigMap{"dirs": {
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelItemSource: "true"}},
		Data:       map[string]string{"list": "/srv/a\nspec\n/srv/b\n"},
	}}

	p := Decide(in)
	names := []string{}
	for _, it := range p.Status.Items {
		names = append(names, it.Name)
	}
	if !slices.Equal(names, []string{"spec", "/srv/a", "/srv/b"}) || p.Status.ItemCount != 3 {
		t.Fatalf("items %v (itemCount %d), want spec, /srv/a, /srv/b", names, p.Status.ItemCount)
	}
	c := condition(t, p, v1alpha1.ConditionItemsValid)
	if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonItemsSkipped || c.Message != "Skipped: spec.oaatItemsFrom[1]: ConfigMap missing not found" {
		t.Fatalf("ItemsValid = %+v", c)
	}
	if !slices.Contains(reasons(p), v1alpha1.ReasonItemsSkipped) {
		t.Fatalf("no ItemsSkipped event: %v", reasons(p))
	}
	if again := Decide(withConfigMaps(input(applied(g, p), time.Second), in.ConfigMaps)); slices.Contains(reasons(again), v1alpha1.ReasonItemsSkipped) {
		t.Fatal("the same problem is reported again")
	}

	g.Spec.OaatItemsFrom = g.Spec.OaatItemsFrom[:1]
	if c := condition(t, Decide(withConfigMaps(input(applied(g, p), time.Second), in.ConfigMaps)), v1alpha1.ConditionItemsValid); c.Status != metav1.ConditionTrue {
		t.Fatalf("ItemsValid = %+v", c)
	}
	g.Spec.OaatItemsFrom = nil
	if meta.FindStatusCondition(Decide(input(applied(g, p), time.Second)).Status.Conditions, v1alpha1.ConditionItemsValid) != nil {
		t.Fatal("a group without sources has an ItemsValid condition")
	}
}

func TestDecideWithoutAnyItemIsNotReady(t *testing.T) {
	g := newGroup()
	g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: v1alpha1.ConfigMapItems{Name: "missing"}}}
	p := Decide(input(g, 0))
	c := condition(t, p, v1alpha1.ConditionReady)
	want := "the group has no items: spec.oaatItems is empty and spec.oaatItemsFrom gives none (spec.oaatItemsFrom[0]: ConfigMap missing not found)"
	if c.Reason != v1alpha1.ReasonInvalidSpec || c.Message != want {
		t.Fatalf("Ready = %+v", c)
	}
}

func withConfigMaps(in Input, configMaps map[string]*corev1.ConfigMap) Input {
	in.ConfigMaps = configMaps
	return in
}

// itemSource is a ConfigMap that opts in as an item source, with the given data.
func itemSource(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelItemSource: "true"}},
		Data:       data,
	}
}
