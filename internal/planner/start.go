package planner

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// startNext chooses the next item when nothing runs and plans its intent and pod: the pending
// verification (spec.verify), which takes the turn after the success that made it due, else the
// oldest on-demand run that may start, else the schedule's choice among the items with no untimed
// wait (parked, done, suspended). When the chosen run cannot start, it returns when to look
// again: when requestLocks says while it waits for a lock, or as for a group that is not ready.
func (d *decision) startNext() (wake time.Time) {
	st := &d.plan.Status
	if st.CurrentRun != nil || d.pods.anyLive() {
		return time.Time{}
	}
	if pending, wake := d.startVerification(); pending {
		return wake
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
	return d.startRun(item, onDemandRun, nil)
}

// startRun is start, or for verifies the start of the verification of the run it names, whose
// pod is of spec.verify's OaatType: it takes the group's turn and locks as a run does, and leaves
// the item's record of runs (lastStarted) as it is.
func (d *decision) startRun(item, onDemandRun string, verifies *v1alpha1.PendingVerification) (retryAt time.Time) {
	st := &d.plan.Status
	run := max(st.RunCount, d.pods.maxRun()) + 1
	typ := d.typeOf(verifies)
	pod, err := podbuild.Build(podbuild.Input{Group: d.group, Template: typ.Spec.Template, Item: item, Run: run, Verifies: verifies})
	if err != nil {
		d.setReady(metav1.ConditionFalse, v1alpha1.ReasonInvalidOaatType, fmt.Sprintf("OaatType %s: %v", typ.Name, err))
		return d.notReadyRetryAt()
	}
	if ok, retryAt := d.requestLocks(item, pod.Name); !ok {
		return retryAt
	}
	annotateOnDemandRun(pod, onDemandRun)
	st.RunCount = run
	st.CurrentRun = &v1alpha1.CurrentRun{Item: item, PodName: pod.Name, StartedAt: d.stamp, OaatRun: onDemandRun}
	d.plan.Create = pod
	if verifies != nil {
		st.CurrentRun.Purpose = v1alpha1.PurposeVerify
		return time.Time{}
	}
	started := d.stamp
	it := d.item(item)
	it.LastStarted = &started
	if onDemandRun != "" {
		// An on-demand run is how a user retries a parked item (kubectl oaat unpark): it is
		// parked again only if this run says so.
		it.ParkedGeneration = 0
	}
	return time.Time{}
}

// typeOf is the OaatType whose pod template runs verifies: spec.verify's for a verification,
// spec.oaatType's for a run (nil verifies). checkReady has found both.
func (d *decision) typeOf(verifies *v1alpha1.PendingVerification) *v1alpha1.OaatType {
	if verifies != nil {
		return d.in.VerifyType
	}
	return d.in.Type
}
