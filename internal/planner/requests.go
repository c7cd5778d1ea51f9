package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/ondemand"
)

// request returns the group's OaatRun of that name, nil when there is none.
func (d *decision) request(name string) *v1alpha1.OaatRun {
	for i := range d.in.Requests {
		if d.in.Requests[i].Name == name {
			return &d.in.Requests[i]
		}
	}
	return nil
}

// settleRequest records how the run of a request ended, in the request. The group's status must
// not record the run's end before this is written (EndsRun).
func (d *decision) settleRequest(cr *v1alpha1.CurrentRun, out ended) {
	req := d.request(cr.OaatRun)
	if cr.OaatRun == "" || req == nil || req.Status.Phase.Finished() {
		return
	}
	d.plan.FinalRequests = append(d.plan.FinalRequests, RequestUpdate{
		Request: req, Status: d.settled(req, cr.Item, cr.PodName, cr.StartedAt, out), EndsRun: true,
	})
}

// settleFromHistory settles an open request whose run the group has recorded already (its pod is
// the last run of its item), with the outcome the item's status keeps: the request's final status
// was not written when the group recorded the run (an older version of the operator went on after
// a conflict), or it was and the cache has not caught up, when writing it again changes nothing.
func (d *decision) settleFromHistory(req *v1alpha1.OaatRun) bool {
	if req.Status.PodName == "" {
		return false
	}
	for i := range d.plan.Status.Items {
		it := &d.plan.Status.Items[i]
		if it.Name != req.Spec.Item || it.LastPodName != req.Status.PodName {
			continue
		}
		started := req.Status.StartedAt
		if started == nil {
			started = it.LastStarted
		}
		var startedAt metav1.Time
		if started != nil {
			startedAt = *started
		}
		out := ended{result: recordedResult(it), exitCode: it.LastExitCode, reason: it.LastReason}
		d.plan.FinalRequests = append(d.plan.FinalRequests, RequestUpdate{
			Request: req, Status: d.settled(req, it.Name, it.LastPodName, startedAt, out),
		})
		return true
	}
	return false
}

// recordedResult is how the last recorded run of an item ended, as its status says: a success
// clears the failure count and a failure raises it, an interruption changes neither.
func recordedResult(it *v1alpha1.ItemStatus) Result {
	switch {
	case it.LastReason == v1alpha1.ReasonInterrupted:
		return ResultInterrupted
	case it.FailureCount == 0 && it.LastSuccess != nil:
		return ResultSucceeded
	}
	return ResultFailed
}

// settled is the final status of a request whose run of item in pod ended with out.
func (d *decision) settled(req *v1alpha1.OaatRun, item, pod string, started metav1.Time, out ended) v1alpha1.OaatRunStatus {
	status := req.Status
	status.Phase, status.Reason = v1alpha1.OaatRunFailed, out.reason
	if out.result == ResultSucceeded {
		status.Phase = v1alpha1.OaatRunSucceeded
	}
	status.Message = message.Request(fmt.Sprintf("Item %q %s in pod %s%s", item, out.result, pod, out.describe()))
	status.PodName, status.ExitCode = pod, out.exitCode
	if status.StartedAt == nil && !started.IsZero() {
		status.StartedAt = &started
	}
	finished := d.stamp
	status.FinishedAt = &finished
	return status
}

// finishRequest plans a request's final status, stamped with the decision's time.
func (d *decision) finishRequest(req *v1alpha1.OaatRun, status v1alpha1.OaatRunStatus) {
	finished := d.stamp
	status.FinishedAt = &finished
	d.plan.FinalRequests = append(d.plan.FinalRequests, RequestUpdate{Request: req, Status: status})
}

// reviewRequests rejects the open requests that cannot be served (an item the group does not
// have, a duplicate of an older pending request for the same item) and queues the others,
// oldest first. A request that says it is in progress while the group runs something else has
// either had its run recorded by the group (its pod is the last run of its item): it is settled
// with that run's outcome; or lost its run (the group's status was overwritten): then it fails
// rather than waiting forever.
func (d *decision) reviewRequests() {
	requests := make([]*v1alpha1.OaatRun, 0, len(d.in.Requests))
	for i := range d.in.Requests {
		requests = append(requests, &d.in.Requests[i])
	}
	slices.SortStableFunc(requests, func(a, b *v1alpha1.OaatRun) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	queued := map[string]string{} // item -> the oldest pending request for it
	cr := d.plan.Status.CurrentRun
	for _, req := range requests {
		phase := req.Status.Phase
		switch {
		case phase.Finished() || d.settling(req):
		case cr != nil && cr.OaatRun == req.Name:
		case d.settleFromHistory(req):
		case phase == v1alpha1.OaatRunInProgress:
			d.finishRequest(req, ondemand.WithPhase(req.Status, v1alpha1.OaatRunFailed, v1alpha1.ReasonPodNotFound,
				"the group no longer runs this request's item: its status was changed by someone else"))
		case !d.itemSet[req.Spec.Item]:
			d.finishRequest(req, ondemand.WithPhase(req.Status, v1alpha1.OaatRunRejected, v1alpha1.ReasonUnknownItem,
				fmt.Sprintf("%q is not an item of OaatGroup %s", req.Spec.Item, d.group.Name)))
		case queued[req.Spec.Item] != "":
			d.finishRequest(req, ondemand.WithPhase(req.Status, v1alpha1.OaatRunRejected, v1alpha1.ReasonDuplicate,
				fmt.Sprintf("OaatRun %s already asks to run item %q and is still pending", queued[req.Spec.Item], req.Spec.Item)))
		default:
			queued[req.Spec.Item] = req.Name
			d.queue = append(d.queue, req)
		}
	}
}

// settling reports whether this decision already gives the request its final status.
func (d *decision) settling(req *v1alpha1.OaatRun) bool {
	return slices.ContainsFunc(d.plan.FinalRequests, func(u RequestUpdate) bool { return u.Request == req })
}

// nextRequest returns the oldest queued request that may start now: none while the group is
// suspended, and a request that respects blackout windows waits while one is open.
func (d *decision) nextRequest() *v1alpha1.OaatRun {
	if d.policy.suspended != "" {
		return nil
	}
	_, blackout := d.policy.timing.Windows.FreeAt(d.in.Now)
	for _, req := range d.queue {
		if !blackout || req.Spec.IgnoreBlackoutWindows {
			return req
		}
	}
	return nil
}

// updateOpenRequests says, in each queued request, whether it runs or what it waits for.
func (d *decision) updateOpenRequests() {
	cr := d.plan.Status.CurrentRun
	for i := range d.in.Requests {
		req := &d.in.Requests[i]
		status := req.Status
		switch {
		case cr != nil && cr.OaatRun == req.Name:
			status.Phase, status.Reason = v1alpha1.OaatRunInProgress, v1alpha1.ReasonItemRunning
			status.Message = message.Request(fmt.Sprintf("Item %q runs in pod %s", cr.Item, cr.PodName))
			status.PodName = cr.PodName
			if status.StartedAt == nil {
				started := cr.StartedAt
				status.StartedAt = &started
			}
		case slices.Contains(d.queue, req):
			status.Phase = v1alpha1.OaatRunPending
			reason, text := d.pendingReason(req)
			status.Reason, status.Message = reason, message.Request(text)
		default:
			continue
		}
		if !equality.Semantic.DeepEqual(status, req.Status) {
			d.plan.OpenRequests = append(d.plan.OpenRequests, RequestUpdate{Request: req, Status: status})
		}
	}
}

// pendingReason says what a queued request waits for, in terms that change only when the
// group's state does.
func (d *decision) pendingReason(req *v1alpha1.OaatRun) (string, string) {
	switch {
	case d.policyErr != nil:
		return v1alpha1.ReasonGroupNotReady, "the group's spec cannot be used: " + d.policyErr.Error()
	case d.policy.suspended != "":
		return v1alpha1.WaitSuspended, "the group is suspended"
	}
	if ready := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionReady); ready != nil && ready.Status != metav1.ConditionTrue {
		return v1alpha1.ReasonGroupNotReady, "the group is not Ready: " + ready.Message
	}
	if end, blackout := d.policy.timing.Windows.FreeAt(d.in.Now); blackout && !req.Spec.IgnoreBlackoutWindows {
		return v1alpha1.WaitBlackout, "a blackout window is open until " + end.UTC().Format(time.RFC3339)
	}
	if w := d.plan.Status.LockWait; w != nil {
		return v1alpha1.WaitLockHeld, "waits for a slot of OaatLock " + strings.Join(w.Locks, ", ")
	}
	return v1alpha1.ReasonQueued, "waits for the group's running item or older requests"
}

// annotateRequest marks the pod of an on-demand run with its request.
func annotateRequest(pod *corev1.Pod, request string) {
	if request == "" {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[v1alpha1.AnnotationOaatRun] = request
}
