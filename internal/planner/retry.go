package planner

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Retry bounds of a group that is not ready. The wait grows with the time the group has been
// failing, so retries slow down geometrically without keeping a counter.
const (
	// MinRetry is the shortest wait before a group that is not ready is looked at again.
	MinRetry = 5 * time.Second
	// maxRetry is the longest.
	maxRetry = 5 * time.Minute
)

// retryDue reports whether a pod creation that the API server refused may be tried again, and
// if not, when it may. Ready stays False with reason PodCreateFailed until a pod of a later
// attempt is seen, so that the wait between attempts (the time since the previous attempt grows
// with the time since the first failure) keeps growing while creation keeps failing.
func (d *decision) retryDue(failed *metav1.Condition) (due bool, retryAt time.Time) {
	firstFailure := failed.LastTransitionTime.Time
	lastAttempt := firstFailure
	for _, it := range d.plan.Status.Items {
		if it.LastStarted != nil && it.LastStarted.After(lastAttempt) {
			lastAttempt = it.LastStarted.Time
		}
	}
	retryAt = lastAttempt.Add(retryWait(lastAttempt.Sub(firstFailure)))
	if d.in.Now.Before(retryAt) {
		return false, retryAt
	}
	return true, time.Time{}
}

// notReadyRetryAt is when to look at a group that is not ready again, after a wait that grows
// with the time Ready has been False, in case what it lacks appears without an event that names
// it.
func (d *decision) notReadyRetryAt() time.Time {
	cond := meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionReady)
	failingFor := d.in.Now.Sub(cond.LastTransitionTime.Time)
	return d.in.Now.Add(retryWait(failingFor))
}

func retryWait(failingFor time.Duration) time.Duration {
	return min(max(failingFor, MinRetry), maxRetry)
}
