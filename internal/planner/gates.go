package planner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// maxNamedItems is how many items a condition message names before it counts the rest.
const maxNamedItems = 10

// observeReset starts a new round when the oaat.io/reset annotation has a value not acted on
// yet: in mode EachOnce every item runs again, and parked items are released.
func (d *decision) observeReset() {
	value := d.group.Annotations[v1alpha1.AnnotationReset]
	st := &d.plan.Status
	if value == "" || value == st.ObservedReset {
		return
	}
	st.ObservedReset = value
	round := d.stamp
	st.RoundStartedAt = &round
	for i := range st.Items {
		st.Items[i].ParkedGeneration = 0
	}
	d.event(corev1.EventTypeNormal, v1alpha1.ReasonGroupReset, fmt.Sprintf(
		"Annotation %s is %q: a new round starts and parked items are released", v1alpha1.AnnotationReset, value))
}

// setGateConditions sets the conditions that say why items are held: Suspended, Parked and, in
// mode EachOnce, Complete.
func (d *decision) setGateConditions() {
	switch d.policy.Suspended {
	case v1alpha1.ReasonSpecSuspend:
		d.setGate(v1alpha1.ConditionSuspended, true, d.policy.Suspended, "spec.suspend is true: no new item starts")
	case v1alpha1.ReasonPauseAnnotation:
		d.setGate(v1alpha1.ConditionSuspended, true, d.policy.Suspended,
			fmt.Sprintf("Annotation %s is \"true\": no new item starts", v1alpha1.AnnotationPauseNewJobs))
	default:
		d.setGate(v1alpha1.ConditionSuspended, false, v1alpha1.ReasonResumed, "New items may start")
	}

	var parked, pending []string
	for i := range d.plan.Status.Items {
		it := &d.plan.Status.Items[i]
		if d.parked(it) {
			parked = append(parked, it.Name)
		}
		if !d.done(it) && d.itemSet[it.Name] {
			pending = append(pending, it.Name)
		}
	}
	if len(parked) > 0 {
		d.setGate(v1alpha1.ConditionParked, true, v1alpha1.ReasonItemsParked,
			"Parked until the spec changes, the group is reset or an OaatRun of the item runs: "+nameList(parked))
	} else {
		d.setGate(v1alpha1.ConditionParked, false, v1alpha1.ReasonNoneParked, "No item is parked")
	}
	d.setComplete(pending)
}

// setGate sets a condition that is absent until it is first True, with an event whenever it
// turns True or back to False.
func (d *decision) setGate(condType string, on bool, reason v1alpha1.Reason, text string) {
	prev := meta.FindStatusCondition(d.plan.Status.Conditions, condType)
	if !on && prev == nil {
		return
	}
	status := metav1.ConditionFalse
	if on {
		status = metav1.ConditionTrue
	}
	if prev == nil || prev.Status != status || prev.Reason != string(reason) {
		d.event(corev1.EventTypeNormal, reason, text)
	}
	d.setCondition(condType, status, reason, text)
}

// setComplete sets, in mode EachOnce, whether every item has succeeded in the round; in mode
// Continuous the condition does not apply and is removed.
func (d *decision) setComplete(pending []string) {
	if !d.policy.EachOnce {
		meta.RemoveStatusCondition(&d.plan.Status.Conditions, v1alpha1.ConditionComplete)
		return
	}
	if len(pending) > 0 {
		d.setCondition(v1alpha1.ConditionComplete, metav1.ConditionFalse, v1alpha1.ReasonItemsPending,
			fmt.Sprintf("%d of %d items have not succeeded in this round: %s", len(pending), len(d.plan.Status.Items), nameList(pending)))
		return
	}
	prev := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionComplete)
	text := fmt.Sprintf("All %d items have succeeded in this round; set annotation %s to a new value to run them again",
		len(d.plan.Status.Items), v1alpha1.AnnotationReset)
	if prev == nil || prev.Status != metav1.ConditionTrue {
		d.event(corev1.EventTypeNormal, v1alpha1.ReasonAllSucceeded, text)
	}
	d.setCondition(v1alpha1.ConditionComplete, metav1.ConditionTrue, v1alpha1.ReasonAllSucceeded, text)
}

// nameList quotes the first names and counts the rest.
func nameList(names []string) string {
	quoted := make([]string, 0, len(names))
	for _, name := range names {
		quoted = append(quoted, fmt.Sprintf("%q", name))
	}
	return message.ListFirst(quoted, maxNamedItems, ", ")
}
