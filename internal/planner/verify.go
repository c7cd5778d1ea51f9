package planner

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// verifyPolicy is spec.verify as read for decisions.
type verifyPolicy struct {
	// every is how long after an item's last successful verification a success is verified
	// again; zero verifies each success.
	every time.Duration
	// rerun makes an item whose newest verification failed due again (onFailure RerunItem).
	rerun bool
}

func readVerifyPolicy(v *v1alpha1.Verify) (*verifyPolicy, error) {
	every, err := parseDuration("spec.verify.every", v.Every)
	return &verifyPolicy{every: every, rerun: v.OnFailure != v1alpha1.VerifyAlertOnly}, err
}

// verificationDue reports whether the success of item it that ended at finishedAt is verified:
// with spec.verify, when the item has no successful verification within spec.verify.every
// before it.
func (d *decision) verificationDue(it *v1alpha1.ItemStatus, finishedAt metav1.Time) bool {
	v := d.policy.verify
	return v != nil && (v.every == 0 || it.LastVerified == nil || !finishedAt.Time.Before(it.LastVerified.Add(v.every)))
}

// awaitVerification records, after the run of item it in pod succeeded, the verification it
// makes due (status.pendingVerification), with the facts its pod gets.
func (d *decision) awaitVerification(it *v1alpha1.ItemStatus, podName string, pod *corev1.Pod, out ended) {
	if !d.verificationDue(it, out.finishedAt) {
		return
	}
	d.plan.Status.PendingVerification = &v1alpha1.PendingVerification{
		Item: it.Name, PodName: podName, FinishedAt: out.finishedAt, ExitCode: out.exitCode,
		Result: message.Truncate(podbuild.TerminationMessage(pod), v1alpha1.MaxSourceResult),
	}
}

// recordVerification records how the verification that was the current run ended, apart from
// the item's runs: a success sets lastVerified and verifiedRunFinishedAt, a failure
// lastVerifyFailure (Verified, which took took); an interrupted one keeps the verification
// pending, to run again.
func (d *decision) recordVerification(cr *v1alpha1.CurrentRun, out ended, took time.Duration) {
	st := &d.plan.Status
	st.CurrentRun = nil
	pending := st.PendingVerification
	if out.result == v1alpha1.ResultInterrupted {
		d.event(corev1.EventTypeNormal, v1alpha1.ReasonVerificationInterrupted, fmt.Sprintf(
			"The verification of item %q in pod %s was interrupted%s: it runs again", cr.Item, cr.PodName, out.describe()))
		return
	}
	st.PendingVerification = nil
	d.plan.Verified = append(d.plan.Verified, Verification{Outcome: Outcome{Item: cr.Item, Result: out.result, Duration: took}, Reason: out.reason})
	it := d.item(cr.Item)
	if out.result == v1alpha1.ResultSucceeded {
		it.LastVerified = &out.finishedAt
		if pending != nil && pending.Item == cr.Item {
			finished := pending.FinishedAt
			it.VerifiedRunFinishedAt = &finished
		}
		if d.group.Spec.RunEvents != v1alpha1.RunEventsFailures {
			d.event(corev1.EventTypeNormal, v1alpha1.ReasonVerificationSucceeded, fmt.Sprintf(
				"The verification of item %q succeeded in pod %s%s", cr.Item, cr.PodName, out.describe()))
		}
		return
	}
	it.LastVerifyFailure = &out.finishedAt
	then := "the item is due again"
	if d.policy.verify == nil || !d.policy.verify.rerun {
		then = "the item's schedule is unchanged (spec.verify.onFailure AlertOnly)"
	}
	d.event(corev1.EventTypeWarning, v1alpha1.ReasonVerificationFailed, fmt.Sprintf(
		"The verification of item %q failed in pod %s%s: %s", cr.Item, cr.PodName, out.describe(), then))
}

// dropStaleVerification forgets a pending verification that can no longer run: spec.verify is
// gone, or its item is no longer the group's.
func (d *decision) dropStaleVerification() {
	st := &d.plan.Status
	if p := st.PendingVerification; p != nil && (d.group.Spec.Verify == nil || !d.itemSet[p.Item]) {
		st.PendingVerification = nil
	}
}

// startVerification starts the pending verification when the group may start a run (not
// suspended, its circuit breaker not open, no blackout window open), or returns when to look
// again; it reports whether there is one, which then takes the group's turn.
func (d *decision) startVerification() (pending bool, wake time.Time) {
	p := d.plan.Status.PendingVerification
	if p == nil {
		return false, time.Time{}
	}
	if d.policy.Suspended != "" || d.breakerOpen() {
		return true, time.Time{}
	}
	if w := d.policy.Timing.WaitOf(schedule.Item{Name: p.Item}, d.in.Now); w != (schedule.Wait{}) {
		return true, w.Until
	}
	return true, d.startRun(p.Item, "", p)
}

// unverified reports whether the item's newest verification failed after its last success with
// spec.verify.onFailure RerunItem, when its last success does not hold it.
func (d *decision) unverified(it *v1alpha1.ItemStatus) bool {
	v := d.policy.verify
	return v != nil && v.rerun && it.VerificationFailing() &&
		(it.LastSuccess == nil || !it.LastVerifyFailure.Before(it.LastSuccess))
}

// setVerifiedCondition says, with spec.verify, whether every item's newest verification
// succeeded (condition Verified).
func (d *decision) setVerifiedCondition() {
	if d.group.Spec.Verify == nil {
		meta.RemoveStatusCondition(&d.plan.Status.Conditions, v1alpha1.ConditionVerified)
		return
	}
	var failing []string
	for i := range d.plan.Status.Items {
		it := &d.plan.Status.Items[i]
		if it.VerificationFailing() {
			failing = append(failing, it.Name)
		}
	}
	if len(failing) > 0 {
		d.setCondition(v1alpha1.ConditionVerified, metav1.ConditionFalse, v1alpha1.ReasonVerificationFailed,
			message.Condition(fmt.Sprintf("The newest verification failed for %d items: %s", len(failing), message.List(failing, ", "))))
		return
	}
	d.setCondition(v1alpha1.ConditionVerified, metav1.ConditionTrue, v1alpha1.ReasonVerificationsPassed,
		"No item's newest verification failed")
}
