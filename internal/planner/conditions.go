package planner

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// setCondition sets a condition of the group, stamped with the decision's time and generation; a
// condition whose status does not change keeps its lastTransitionTime.
func (d *decision) setCondition(condType string, status metav1.ConditionStatus, reason v1alpha1.Reason, text string) {
	meta.SetStatusCondition(&d.plan.Status.Conditions, metav1.Condition{
		Type: condType, Status: status, Reason: string(reason), Message: message.Condition(text),
		LastTransitionTime: d.stamp, ObservedGeneration: d.group.Generation,
	})
}

func idleCondition(stamp metav1.Time, generation int64) metav1.Condition {
	return metav1.Condition{
		Type: v1alpha1.ConditionRunning, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonIdle),
		Message: "No item pod is active", LastTransitionTime: stamp, ObservedGeneration: generation,
	}
}

// setAtRisk writes condition AtRisk as the forecast made it (Input.AtRisk) when it was made for the
// group's generation; otherwise the condition stays as it was, until the forecast of the new
// generation is made.
func (d *decision) setAtRisk() {
	if c := d.in.AtRisk; c != nil && c.ObservedGeneration == d.group.Generation {
		meta.SetStatusCondition(&d.plan.Status.Conditions, *c)
	}
}

// setRunningCondition says whether an item pod is active.
func (d *decision) setRunningCondition() {
	cr := d.plan.Status.CurrentRun
	if cr == nil {
		idle := idleCondition(d.stamp, d.group.Generation)
		if why := d.slotsBeyondCapacity(); why != "" {
			idle.Message = message.Condition(idle.Message + ": " + why)
		}
		meta.SetStatusCondition(&d.plan.Status.Conditions, idle)
		return
	}
	d.setCondition(v1alpha1.ConditionRunning, metav1.ConditionTrue, v1alpha1.ReasonItemRunning,
		fmt.Sprintf("Item %q runs in pod %s", cr.Item, cr.PodName))
}
