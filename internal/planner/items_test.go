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

	// The spec's items, then the ConfigMap's new ones; the missing source is reported. Among the
	// items never run, the seeded tie-break picks /srv/b.
	p := Decide(in)
	skipped := "Skipped: spec.oaatItemsFrom[1]: ConfigMap missing not found"
	itemsValid := cond(v1alpha1.ConditionItemsValid, metav1.ConditionFalse, v1alpha1.ReasonItemsSkipped, skipped, 0)
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{itemsValid, readyCond(3, 0), runningCond(g, "/srv/b", 1, 0)},
			CurrentRun:         currentRun(g, "/srv/b", 1, 0), RunCount: 1, ItemCount: 3,
			Items: []v1alpha1.ItemStatus{{Name: "spec"}, {Name: "/srv/a"}, {Name: "/srv/b", LastStarted: at(0), WaitReason: v1alpha1.WaitRunning}},
		},
		Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonItemsSkipped, Message: skipped}},
		Create: newPod(t, g, "/srv/b", 1),
	}, p)

	// The same problem is not reported again.
	next := applied(g, p)
	run := runPod(t, next, "/srv/b", 1, corev1.PodRunning)
	checkPlan(t, Plan{Status: next.Status}, Decide(withConfigMaps(input(next, time.Second, run), in.ConfigMaps)))

	// Every source read: ItemsValid True. No source: no ItemsValid, and the items of the spec,
	// with the removed item that still runs.
	next.Spec.OaatItemsFrom = next.Spec.OaatItemsFrom[:1]
	want := next.Status.DeepCopy()
	want.Conditions[0] = cond(v1alpha1.ConditionItemsValid, metav1.ConditionTrue, v1alpha1.ReasonItemsRead, "Every source of items was read", time.Second)
	checkPlan(t, Plan{Status: *want}, Decide(withConfigMaps(input(next, time.Second, run), in.ConfigMaps)))
	next.Spec.OaatItemsFrom = nil
	want = next.Status.DeepCopy()
	want.Conditions, want.ItemCount = want.Conditions[1:], 1
	want.Items = []v1alpha1.ItemStatus{want.Items[0], want.Items[2]}
	want.Conditions[0].Message = "OaatType sleeper found, 1 items"
	checkPlan(t, Plan{Status: *want}, Decide(input(next, time.Second, run)))
}

func TestDecideWithoutAnyItemIsNotReady(t *testing.T) {
	g := newGroup()
	g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "missing"}}}
	text := "the group has no items: spec.oaatItems is empty and spec.oaatItemsFrom gives none (spec.oaatItemsFrom[0]: ConfigMap missing not found)"
	skipped := "Skipped: spec.oaatItemsFrom[0]: ConfigMap missing not found"
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{
				cond(v1alpha1.ConditionItemsValid, metav1.ConditionFalse, v1alpha1.ReasonItemsSkipped, skipped, 0),
				cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, text, 0), idleCond(0)},
		},
		Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonItemsSkipped, Message: skipped},
			{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonInvalidSpec, Message: text}},
		RequeueAfter: 5 * time.Second,
	}, Decide(input(g, 0)))
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
	if c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonItemsSkipped) || c.Message != want {
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
