package planner

import (
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Fallback is what the controller applies instead when the API server refuses part of a plan.
type Fallback struct {
	// Status is the group's status to write.
	Status v1alpha1.OaatGroupStatus
	// Event reports Status once it is written; nil when Status is the status as last written,
	// which then need not be written again.
	Event *Event
	// RequeueAfter is when the group is to be looked at again.
	RequeueAfter time.Duration
}

// WithdrawRun is the fallback when the API server refused the pod of Create (refused says why),
// after Status was written: the intent of the run is withdrawn, Ready says why, and the next
// attempt waits (see checkReady). It is stamped with the time of the decision.
func (p Plan) WithdrawRun(refused error) Fallback {
	status := *p.Status.DeepCopy()
	event := setPodCreateFailed(&status, p.now, refused)
	return Fallback{Status: status, Event: &event, RequeueAfter: MinRetry}
}

// StatusRejected is the fallback when the API server refused Status as invalid (rejected says
// why): written, the status as last written, says so in Ready, once; see setStatusRejected. It is
// stamped with the time of the decision.
func (p Plan) StatusRejected(written v1alpha1.OaatGroupStatus, rejected error) Fallback {
	status := *written.DeepCopy()
	event, retry := setStatusRejected(&status, p.now, rejected)
	return Fallback{Status: status, Event: event, RequeueAfter: retry}
}
