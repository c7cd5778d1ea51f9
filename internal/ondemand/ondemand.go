// Package ondemand decides what becomes of an on-demand run (an OaatRun) apart from its group:
// a finished one is deleted once its time to live is over, and an open one whose group does not
// exist is given its final status. Everything else about an on-demand run (queueing, its run,
// its outcome) is decided with its group, by the planner. The decisions are pure functions of
// the OaatRun, whether its group exists and the time.
package ondemand

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duration"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// defaultTTL is how long a finished OaatRun is kept when its ttlAfterFinished is absent.
const defaultTTL = time.Hour

// Input is the snapshot one decision about an OaatRun is made from.
type Input struct {
	// OnDemandRun is the on-demand run (the OaatRun) decided about.
	OnDemandRun *v1alpha1.OaatRun
	// GroupFound says whether the API server has the OaatGroup the on-demand run names; it is
	// read only when NeedsGroup says so, and false otherwise.
	GroupFound bool
	// Now is the time of the decision.
	Now time.Time
}

// Plan is what the on-demand run reconciler applies: delete the OaatRun, or write Status, or nothing;
// then look at the OaatRun again after RequeueAfter (zero: only when something changes).
type Plan struct {
	// Delete says that the OaatRun is finished and its time to live is over.
	Delete bool
	// Status is the final status of an open OaatRun whose group does not exist; nil otherwise.
	Status *v1alpha1.OaatRunStatus
	// RequeueAfter is how long until a finished OaatRun expires.
	RequeueAfter time.Duration
}

// NeedsGroup reports whether a decision about the OaatRun needs to know whether its group
// exists: only while the OaatRun is not finished.
func NeedsGroup(onDemandRun *v1alpha1.OaatRun) bool {
	_, finished := Expiry(onDemandRun)
	return !finished
}

// Decide decides what becomes of the OaatRun apart from its group.
func Decide(in Input) Plan {
	if expires, finished := Expiry(in.OnDemandRun); finished {
		if wait := expires.Sub(in.Now); wait > 0 {
			return Plan{RequeueAfter: wait}
		}
		return Plan{Delete: true}
	}
	if in.GroupFound {
		return Plan{}
	}
	if status, ok := Orphaned(in.OnDemandRun, in.Now); ok {
		return Plan{Status: &status}
	}
	return Plan{}
}

// Expiry is when a finished OaatRun is to be deleted, and false while it is not finished.
func Expiry(onDemandRun *v1alpha1.OaatRun) (time.Time, bool) {
	if !onDemandRun.Status.Phase.Finished() || onDemandRun.Status.FinishedAt == nil {
		return time.Time{}, false
	}
	ttl, err := duration.Parse(string(onDemandRun.Spec.TTLAfterFinished))
	if err != nil {
		ttl = defaultTTL
	}
	return onDemandRun.Status.FinishedAt.Add(ttl), true
}

// Orphaned is the final status of an open OaatRun whose group does not exist: Rejected, or
// Failed when its run had started; ok is false for an OaatRun already finished.
func Orphaned(onDemandRun *v1alpha1.OaatRun, now time.Time) (status v1alpha1.OaatRunStatus, ok bool) {
	if onDemandRun.Status.Phase.Finished() {
		return onDemandRun.Status, false
	}
	status = WithPhase(onDemandRun.Status, v1alpha1.OaatRunRejected, v1alpha1.ReasonGroupNotFound,
		fmt.Sprintf("OaatGroup %s does not exist in namespace %s", onDemandRun.Spec.OaatGroup, onDemandRun.Namespace))
	if onDemandRun.Status.Phase == v1alpha1.OaatRunInProgress {
		status = WithPhase(onDemandRun.Status, v1alpha1.OaatRunFailed, v1alpha1.ReasonGroupDeleted,
			fmt.Sprintf("OaatGroup %s was deleted while item %q ran", onDemandRun.Spec.OaatGroup, onDemandRun.Spec.Item))
	}
	finished := metav1.NewTime(now.Truncate(time.Second))
	status.FinishedAt = &finished
	return status, true
}

// WithPhase is the OaatRun's status with a final phase, reason and message.
func WithPhase(status v1alpha1.OaatRunStatus, phase v1alpha1.OaatRunPhase, reason v1alpha1.Reason, text string) v1alpha1.OaatRunStatus {
	status.Phase, status.Reason, status.Message = phase, string(reason), message.OnDemandRun(text)
	return status
}
