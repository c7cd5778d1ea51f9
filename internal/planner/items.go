package planner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// syncItems lists the group's items in their order, keeping their history. The history of an
// item that is no longer the group's stays while it runs or a pod of it remains, so that its
// last run is recorded and its pods can be found; then it goes.
func (d *decision) syncItems() {
	st := &d.plan.Status
	byName := make(map[string]v1alpha1.ItemStatus, len(st.Items))
	for _, it := range st.Items {
		byName[it.Name] = it
	}
	items := make([]v1alpha1.ItemStatus, 0, len(d.items))
	for _, name := range d.items {
		it, ok := byName[name]
		if !ok {
			it = v1alpha1.ItemStatus{Name: name}
		}
		items = append(items, it)
	}
	for _, it := range st.Items {
		running := st.CurrentRun != nil && st.CurrentRun.Item == it.Name
		if !d.itemSet[it.Name] && (running || d.pods.ofItem(it.Name)) {
			items = append(items, it)
		}
	}
	st.Items = items
}

// fitItems keeps of items those that the OaatType's pod template can run, and adds to problems
// why each other is skipped (podbuild.CheckItem): an item that would make an invalid claim name is
// refused here, never sent to the API server in a pod. Without an OaatType every item is kept.
func fitItems(typ *v1alpha1.OaatType, items, problems []string) (fit, allProblems []string) {
	if typ == nil {
		return items, problems
	}
	fit = items[:0:0]
	for _, item := range items {
		if err := podbuild.CheckItem(&typ.Spec.Template, item); err != nil {
			problems = append(problems, fmt.Sprintf("OaatType %s: %v", typ.Name, err))
			continue
		}
		fit = append(fit, item)
	}
	return fit, problems
}

// setItemsValid says, for a group with sources of items or items its OaatType cannot run, whether
// all of them were read and used.
func (d *decision) setItemsValid() {
	if len(d.group.Spec.OaatItemsFrom) == 0 && len(d.itemProblems) == 0 {
		meta.RemoveStatusCondition(&d.plan.Status.Conditions, v1alpha1.ConditionItemsValid)
		return
	}
	if len(d.itemProblems) == 0 {
		d.setCondition(v1alpha1.ConditionItemsValid, metav1.ConditionTrue, v1alpha1.ReasonItemsRead,
			"Every source of items was read")
		return
	}
	text := message.Condition("Skipped: " + message.List(d.itemProblems, "; "))
	prev := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionItemsValid)
	if prev == nil || prev.Status != metav1.ConditionFalse || prev.Message != text {
		d.event(corev1.EventTypeWarning, v1alpha1.ReasonItemsSkipped, text)
	}
	d.setCondition(v1alpha1.ConditionItemsValid, metav1.ConditionFalse, v1alpha1.ReasonItemsSkipped, text)
}
