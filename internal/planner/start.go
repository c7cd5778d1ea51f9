package planner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// startNext chooses the next item when nothing runs and plans its intent and pod. Items held
// by the group (parked, done, suspended) are not considered; the others by the schedule.
func (d *decision) startNext() {
	st := &d.plan.Status
	if st.CurrentRun != nil || d.pods.anyLive() {
		return
	}
	var free []schedule.Item
	for i := range st.Items {
		if d.held(&st.Items[i]) == "" {
			free = append(free, scheduleItem(&st.Items[i]))
		}
	}
	next, ok := d.policy.timing.Next(free, d.in.Now, d.in.Rand)
	if !ok {
		return
	}

	run := max(st.RunCount, d.pods.maxRun()) + 1
	pod, err := d.buildPod(next.Name, run)
	if err != nil {
		d.setReady(metav1.ConditionFalse, v1alpha1.ReasonInvalidOaatType, fmt.Sprintf("OaatType %s: %v", d.in.Type.Name, err))
		d.retryNotReady()
		return
	}
	st.RunCount = run
	st.CurrentRun = &v1alpha1.CurrentRun{Item: next.Name, PodName: pod.Name, StartedAt: d.stamp}
	started := d.stamp
	d.item(next.Name).LastStarted = &started
	d.plan.Create = pod
	d.plan.Started = Event{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunStarted,
		Message: fmt.Sprintf("Started item %q in pod %s", next.Name, pod.Name)}
}
