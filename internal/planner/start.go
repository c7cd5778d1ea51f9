package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// startNext chooses the next item when nothing runs and plans its intent and pod: the oldest
// on-demand run that may start, else the schedule's choice among the items with no untimed
// wait (parked, done, suspended). When the chosen run cannot start, it returns when to look
// again: when requestLocks says while it waits for a lock, or as for a group that is not ready.
func (d *decision) startNext() (wake time.Time) {
	st := &d.plan.Status
	if st.CurrentRun != nil || d.pods.anyLive() {
		return time.Time{}
	}
	if onDemandRun := d.nextOnDemandRun(); onDemandRun != nil {
		return d.start(onDemandRun.Spec.Item, onDemandRun.Name)
	}
	if d.breakerOpen() {
		// While the circuit breaker is open, its probe takes the schedule's place (breaker.go).
		return d.startProbe()
	}
	var free []schedule.Item
	for i := range st.Items {
		if d.untimedWait(&st.Items[i]) == "" {
			free = append(free, d.scheduleItemOf(&st.Items[i]))
		}
	}
	if next, ok := d.policy.Timing.Next(free, d.in.Now, d.in.Rand, d.requestedItem()); ok {
		return d.start(next.Name, "")
	}
	return time.Time{}
}

// start plans the intent and the pod of a run of item, for the named on-demand run if not empty, or
// returns when to look again if the run cannot start.
func (d *decision) start(item, onDemandRun string) (retryAt time.Time) {
	st := &d.plan.Status
	run := max(st.RunCount, d.pods.maxRun()) + 1
	pod, err := d.buildPod(item, run)
	if err != nil {
		d.setReady(metav1.ConditionFalse, v1alpha1.ReasonInvalidOaatType, fmt.Sprintf("OaatType %s: %v", d.in.Type.Name, err))
		return d.notReadyRetryAt()
	}
	if ok, retryAt := d.requestLocks(item, pod.Name); !ok {
		return retryAt
	}
	annotateOnDemandRun(pod, onDemandRun)
	st.RunCount = run
	st.CurrentRun = &v1alpha1.CurrentRun{Item: item, PodName: pod.Name, StartedAt: d.stamp, OaatRun: onDemandRun}
	started := d.stamp
	it := d.item(item)
	it.LastStarted = &started
	if onDemandRun != "" {
		// An on-demand run is how a user retries a parked item (kubectl oaat unpark): it is
		// parked again only if this run says so.
		it.ParkedGeneration = 0
	}
	d.plan.Create = pod
	return time.Time{}
}

// buildPod is the pod of the run numbered run of item.
func (d *decision) buildPod(item string, run int64) (*corev1.Pod, error) {
	return podbuild.Build(podbuild.Input{Group: d.group, Template: d.in.Type.Spec.Template, Item: item, Run: run})
}
