package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// newOnDemandRun returns an OaatRun of item of the group.
func newOnDemandRun(name, group, item string) *v1alpha1.OaatRun {
	return support.Run(ns, name, group, item)
}

// expectOnDemandRun waits until the OaatRun has the phase and reason, and returns it.
func expectOnDemandRun(ctx SpecContext, name string, phase v1alpha1.OaatRunPhase, reason string) *v1alpha1.OaatRun {
	GinkgoHelper()
	onDemandRun := &v1alpha1.OaatRun{}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, onDemandRun)).To(Succeed())
		g.Expect(onDemandRun.Status.Phase).To(Equal(phase), "OaatRun %s: %s", name, onDemandRun.Status.Message)
		g.Expect(onDemandRun.Status.Reason).To(Equal(reason), "OaatRun %s: %s", name, onDemandRun.Status.Message)
	}).WithContext(ctx).Should(Succeed())
	return onDemandRun
}

var _ = Describe("On-demand runs", func() {
	It("serves on-demand runs before the schedule, oldest first, one at a time, and rejects bad ones", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), newGroup("backups", "a", "b", "c"))
		scheduled := waitForLivePod(ctx, "backups")
		markRunning(ctx, scheduled.Name)

		By("asking for c, then b, then c again and an unknown item while " + scheduled.Name + " runs")
		create(ctx, newOnDemandRun("first", "backups", "c"))
		time.Sleep(1100 * time.Millisecond) // creation timestamps have whole seconds
		create(ctx, newOnDemandRun("second", "backups", "b"), newOnDemandRun("again", "backups", "c"), newOnDemandRun("unknown", "backups", "zzz"))
		expectOnDemandRun(ctx, "first", v1alpha1.OaatRunPending, string(v1alpha1.ReasonQueued))
		expectOnDemandRun(ctx, "second", v1alpha1.OaatRunPending, string(v1alpha1.ReasonQueued))
		dup := expectOnDemandRun(ctx, "again", v1alpha1.OaatRunRejected, string(v1alpha1.ReasonDuplicate))
		Expect(dup.Status.Message).To(ContainSubstring("OaatRun first already asks to run item \"c\""))
		Expect(dup.Status.FinishedAt).NotTo(BeNil())
		expectOnDemandRun(ctx, "unknown", v1alpha1.OaatRunRejected, string(v1alpha1.ReasonUnknownItem))
		Consistently(func(g Gomega) {
			pods, err := livePodsOf(ctx, "backups")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(podNames(pods)).To(ConsistOf(scheduled.Name))
		}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed(), "an on-demand run started a pod while another runs")

		By("running first's item once the scheduled run ends")
		finishPod(ctx, scheduled.Name, 0, "Completed")
		first := waitForLivePod(ctx, "backups", scheduled.Name)
		Expect(first.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, "c"))
		Expect(first.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationOaatRun, "first"))
		onDemandRun := expectOnDemandRun(ctx, "first", v1alpha1.OaatRunInProgress, string(v1alpha1.ReasonItemRunning))
		Expect(onDemandRun.Status.PodName).To(Equal(first.Name))
		Expect(getGroup(ctx, Default, "backups").Status.CurrentRun.OaatRun).To(Equal("first"))

		finishPod(ctx, first.Name, 0, "Completed")
		onDemandRun = expectOnDemandRun(ctx, "first", v1alpha1.OaatRunSucceeded, "Completed")
		Expect(onDemandRun.Status.ExitCode).To(HaveValue(BeEquivalentTo(0)))
		Expect(onDemandRun.Status.StartedAt).NotTo(BeNil())
		// apply writes the on-demand run's final status before the group's: the item's success
		// may come a moment later.
		Eventually(func(g Gomega) {
			g.Expect(itemStatus(getGroup(ctx, g, "backups"), "c").LastSuccess).NotTo(BeNil(), "an on-demand run is a run of the item")
		}).WithContext(ctx).Should(Succeed())

		By("running second's item next, and recording its failure in the on-demand run")
		second := waitForLivePod(ctx, "backups", scheduled.Name, first.Name)
		Expect(second.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationOaatRun, "second"))
		finishPod(ctx, second.Name, 3, "Error")
		onDemandRun = expectOnDemandRun(ctx, "second", v1alpha1.OaatRunFailed, "Error")
		Expect(onDemandRun.Status.ExitCode).To(HaveValue(BeEquivalentTo(3)))
		Expect(onDemandRun.Status.Message).To(ContainSubstring(second.Name))
	}, SpecTimeout(time.Minute))

	It("rejects an on-demand run for a missing or deleted group and deletes finished on-demand runs after their TTL", func(ctx SpecContext) {
		orphan := newOnDemandRun("orphan", "nope", "a")
		orphan.Spec.TTLAfterFinished = "3s"
		create(ctx, orphan)
		onDemandRun := expectOnDemandRun(ctx, "orphan", v1alpha1.OaatRunRejected, string(v1alpha1.ReasonGroupNotFound))
		Expect(onDemandRun.Status.Message).To(ContainSubstring("OaatGroup nope does not exist"))
		Eventually(func() bool {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(orphan), &v1alpha1.OaatRun{})
			return client.IgnoreNotFound(err) == nil && err != nil
		}).WithContext(ctx).WithTimeout(10*time.Second).Should(BeTrue(), "the rejected on-demand run is deleted after 3s")
		Expect(time.Since(onDemandRun.Status.FinishedAt.Time)).To(BeNumerically(">=", 2*time.Second))

		By("deleting a suspended group with a pending on-demand run")
		group := newGroup("paused", "a")
		group.Spec.Suspend = true
		create(ctx, newOaatType(typeName), group, newOnDemandRun("waiting", "paused", "a"))
		expectOnDemandRun(ctx, "waiting", v1alpha1.OaatRunPending, string(v1alpha1.WaitSuspended))
		Expect(k8sClient.Delete(ctx, group)).To(Succeed())
		expectOnDemandRun(ctx, "waiting", v1alpha1.OaatRunRejected, string(v1alpha1.ReasonGroupNotFound))
	}, SpecTimeout(time.Minute))

	It("refuses to change what an on-demand run asks for", func(ctx SpecContext) {
		create(ctx, newOnDemandRun("fixed", "nope", "a"))
		onDemandRun := expectOnDemandRun(ctx, "fixed", v1alpha1.OaatRunRejected, string(v1alpha1.ReasonGroupNotFound))
		onDemandRun.Spec.Item = "b"
		err := k8sClient.Update(ctx, onDemandRun)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("the group, the item and ignoreBlackoutWindows of an OaatRun cannot change"))
	}, SpecTimeout(time.Minute))
})
