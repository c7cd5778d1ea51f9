package planner

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// startNext chooses the next item when nothing runs and plans its intent and pod: the oldest
// on-demand request that may start, else the schedule's choice among the items the group does
// not hold (parked, done, suspended).
func (d *decision) startNext() {
	st := &d.plan.Status
	if st.CurrentRun != nil || d.pods.anyLive() {
		return
	}
	if req := d.nextRequest(); req != nil {
		d.start(req.Spec.Item, req.Name)
		return
	}
	var free []schedule.Item
	for i := range st.Items {
		if d.held(&st.Items[i]) == "" {
			free = append(free, scheduleItem(&st.Items[i]))
		}
	}
	if next, ok := d.policy.timing.Next(free, d.in.Now, d.in.Rand); ok {
		d.start(next.Name, "")
	}
}

// start plans the intent and the pod of a run of item, for the named request if not empty.
func (d *decision) start(item, request string) {
	st := &d.plan.Status
	run := max(st.RunCount, d.pods.maxRun()) + 1
	pod, err := d.buildPod(item, run)
	if err != nil {
		d.setReady(metav1.ConditionFalse, v1alpha1.ReasonInvalidOaatType, fmt.Sprintf("OaatType %s: %v", d.in.Type.Name, err))
		d.retryNotReady()
		return
	}
	if !d.takeLocks(item, pod.Name) {
		return
	}
	annotateRequest(pod, request)
	st.RunCount = run
	st.CurrentRun = &v1alpha1.CurrentRun{Item: item, PodName: pod.Name, StartedAt: d.stamp, OaatRun: request}
	started := d.stamp
	d.item(item).LastStarted = &started
	d.plan.Create = pod
}
