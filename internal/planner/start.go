package planner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// startNext chooses the next item when nothing runs and plans its intent and pod, or asks to be
// woken when the next item becomes eligible.
func (d *decision) startNext() {
	st := &d.plan.Status
	if st.CurrentRun != nil || d.pods.anyLive() {
		return
	}
	t, _ := timing(&d.group.Spec) // checked by checkReady
	items := make([]schedule.Item, 0, len(st.Items))
	for _, it := range st.Items {
		items = append(items, schedule.Item{Name: it.Name, LastSuccess: timeOf(it.LastSuccess), LastFailure: timeOf(it.LastFailure)})
	}
	next, ok := t.Next(items, d.in.Now, d.in.Rand)
	if !ok {
		if at, waits := t.NextEligible(items, d.in.Now); waits {
			d.requeueAt(at)
		}
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
