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
		{ConfigMap: &v1alpha1.ConfigMapItems{Name: "dirs", Key: "list"}},
		{ConfigMap: &v1alpha1.ConfigMapItems{Name: "missing"}},
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
	g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "missing"}}}
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

func TestDecideTakesItemsFromClaimsAndRefusesInvalidClaimNames(t *testing.T) {
	g := newGroup("/srv/photos")
	g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{PersistentVolumeClaims: &v1alpha1.PersistentVolumeClaimItems{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"backup": "nightly"}},
	}}}
	in := input(g, 0)
	in.Type.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "{{oaat_item}}"},
	}}}
	labelled := map[string]string{"backup": "nightly"}
	in.Claims = []metav1.PartialObjectMetadata{
		{ObjectMeta: metav1.ObjectMeta{Name: "data-web", Labels: labelled}},
		{ObjectMeta: metav1.ObjectMeta{Name: "data-db", Labels: labelled}},
		{ObjectMeta: metav1.ObjectMeta{Name: "scratch"}},
	}

	p := Decide(in)
	names := []string{}
	for _, it := range p.Status.Items {
		names = append(names, it.Name)
	}
	if !slices.Equal(names, []string{"data-db", "data-web"}) || p.Status.ItemCount != 2 {
		t.Fatalf("items %v (itemCount %d), want data-db, data-web", names, p.Status.ItemCount)
	}
	c := condition(t, p, v1alpha1.ConditionItemsValid)
	want := `Skipped: OaatType sleeper: item "/srv/photos" makes claimName "/srv/photos" of volume data, not a valid claim name: ` +
		"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an " +
		`alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonItemsSkipped || c.Message != want {
		t.Fatalf("ItemsValid = %+v\nwant message %q", c, want)
	}
	if !slices.Contains(reasons(p), v1alpha1.ReasonItemsSkipped) {
		t.Fatalf("no ItemsSkipped event: %v", reasons(p))
	}
	if p.Create == nil || p.Create.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != p.Status.CurrentRun.Item {
		t.Fatalf("pod %+v does not mount the claim of the run %+v", p.Create, p.Status.CurrentRun)
	}

	// Without the spec's path, and so without a source, nothing is skipped: no condition.
	g.Spec.OaatItems, g.Spec.OaatItemsFrom = []string{"data-web"}, nil
	again := input(applied(g, p), time.Second)
	again.Type = in.Type
	if c := meta.FindStatusCondition(Decide(again).Status.Conditions, v1alpha1.ConditionItemsValid); c != nil {
		t.Fatalf("ItemsValid = %+v, want none", c)
	}
}
