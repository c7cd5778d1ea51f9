package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Verifications chained to success (spec.verify)", func() {
	// A group of one item whose type hands over a snapshot ID in its termination message, and a
	// verification type of its own: each success starts the verification in the next turn, with
	// the run's facts; a passed one is recorded apart from the runs, a failed one makes the item
	// due again once failureCoolOff has passed, without counting as its failure.
	It("runs the verification after each success with the run's facts, and reruns the item when it fails", func(ctx SpecContext) {
		checker := newOaatType("checker")
		checker.Spec.Template.Spec.Containers[0].Args = []string{"restic restore $OAAT_SOURCE_RESULT for {{oaat_item}}"}
		group := newGroup("verified", "a")
		group.Spec.Frequency = "1h"
		group.Spec.FailureCoolOff = "2s"
		group.Spec.Verify = &v1alpha1.Verify{OaatType: "checker"}
		create(ctx, newOaatType(typeName), checker, group)

		By("starting the verification after the run succeeds, with what the run handed over")
		run := waitForLivePod(ctx, "verified")
		Expect(run.Labels).NotTo(HaveKey(v1alpha1.LabelPurpose))
		markRunning(ctx, run.Name)
		ended := finishWithMessage(ctx, run.Name, 0, "snapshot 1a2b3c")
		check := waitForLivePod(ctx, "verified", run.Name)
		Expect(check.Labels).To(HaveKeyWithValue(v1alpha1.LabelPurpose, string(v1alpha1.PurposeVerify)))
		Expect(check.Spec.Containers[0].Args).To(Equal([]string{"restic restore $OAAT_SOURCE_RESULT for a"}), "the result is never substituted into a command")
		Expect(check.Spec.Containers[0].Env).To(ContainElements(
			corev1.EnvVar{Name: v1alpha1.EnvItem, Value: "a"},
			corev1.EnvVar{Name: v1alpha1.EnvSourcePod, Value: run.Name},
			corev1.EnvVar{Name: v1alpha1.EnvSourceExitCode, Value: "0"},
			corev1.EnvVar{Name: v1alpha1.EnvSourceResult, Value: "snapshot 1a2b3c"},
		))
		Eventually(func(g Gomega) {
			st := getGroup(ctx, g, "verified").Status
			g.Expect(st.CurrentRun).NotTo(BeNil())
			g.Expect(st.CurrentRun.Purpose).To(Equal(v1alpha1.PurposeVerify))
			g.Expect(st.PendingVerification).NotTo(BeNil())
			g.Expect(st.PendingVerification.Result).To(Equal("snapshot 1a2b3c"))
		}).WithContext(ctx).Should(Succeed())

		By("recording a passed verification apart from the runs")
		markRunning(ctx, check.Name)
		finishPod(ctx, check.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "verified")
			it := group.Status.Items[0]
			g.Expect(group.Status.PendingVerification).To(BeNil())
			g.Expect(group.Status.CurrentRun).To(BeNil())
			g.Expect(it.LastVerified).NotTo(BeNil())
			g.Expect(it.VerifiedRunFinishedAt).To(Equal(&ended))
			g.Expect(it.LastPodName).To(Equal(run.Name), "the verification is not the item's last run")
			expectCondition(g, group, v1alpha1.ConditionVerified, metav1.ConditionTrue, v1alpha1.ReasonVerificationsPassed)
		}).WithContext(ctx).Should(Succeed())
		expectNoLivePod(ctx, "verified", timeout/10)

		By("rerunning the item when a later verification fails, which is no failure of the item")
		create(ctx, newOnDemandRun("verified-now", "verified", "a"))
		again := waitForLivePod(ctx, "verified", run.Name, check.Name)
		markRunning(ctx, again.Name)
		finishWithMessage(ctx, again.Name, 0, "snapshot 4d5e6f")
		failing := waitForLivePod(ctx, "verified", run.Name, check.Name, again.Name)
		markRunning(ctx, failing.Name)
		finishPod(ctx, failing.Name, 1, "Error")
		var verifyFailure time.Time
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "verified")
			it := group.Status.Items[0]
			g.Expect(it.LastVerifyFailure).NotTo(BeNil())
			verifyFailure = it.LastVerifyFailure.Time
			g.Expect(it.FailureCount).To(BeZero())
			g.Expect(it.LastFailure).To(BeNil())
			expectCondition(g, group, v1alpha1.ConditionVerified, metav1.ConditionFalse, v1alpha1.ReasonVerificationFailed)
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "verified", corev1.EventTypeWarning, v1alpha1.ReasonVerificationFailed)
		rerun := waitForLivePod(ctx, "verified", run.Name, check.Name, again.Name, failing.Name)
		Expect(rerun.Labels).NotTo(HaveKey(v1alpha1.LabelPurpose), "the item runs again, within its frequency")
		Expect(rerun.CreationTimestamp.Time).NotTo(BeTemporally("<", verifyFailure.Add(2*time.Second)),
			"the rerun waited failureCoolOff after the failed verification")
	})
})

// finishWithMessage ends the pod as finishPod does, in the same status write its main container
// leaving message as its termination message; it returns when the pod ended.
func finishWithMessage(ctx context.Context, name string, exitCode int32, message string) metav1.Time {
	GinkgoHelper()
	return finishPodWith(ctx, name, exitCode, "Completed", metav1.NewTime(time.Now().Truncate(time.Second)), func(term *corev1.ContainerStateTerminated) {
		term.Message = message
	})
}
