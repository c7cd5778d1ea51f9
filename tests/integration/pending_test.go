package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Pending timeout", func() {
	// No kubelet runs here: a pod the test does not mark started stays Pending, as one whose claim
	// cannot be mounted does on a real node.
	It("stops a run whose pod never starts, as a failure, and leaves a started one to run", func(ctx SpecContext) {
		group := newGroup("stuck", "a", "b")
		group.Spec.PendingTimeout = "5s"
		create(ctx, newOaatType(typeName), group)
		pod := waitForLivePod(ctx, "stuck")
		item := pod.Annotations[v1alpha1.AnnotationItem]

		By("the first pod never starting")
		Eventually(func(g Gomega) {
			it := itemStatus(getGroup(ctx, g, "stuck"), item)
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonPendingTimeout)))
			g.Expect(it.FailureCount).To(BeEquivalentTo(1))
			g.Expect(it.LastSuccess).To(BeNil())
		}).WithContext(ctx).WithTimeout(15 * time.Second).Should(Succeed())
		expectEvent(ctx, "stuck", corev1.EventTypeWarning, v1alpha1.ReasonRunStopping)
		expectEvent(ctx, "stuck", corev1.EventTypeWarning, v1alpha1.ReasonRunFailed)

		By("the next pod starting in time")
		next := waitForLivePod(ctx, "stuck", pod.Name)
		markRunning(ctx, next.Name)
		Consistently(func(g Gomega) {
			live, err := livePodsOf(ctx, "stuck")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(podNames(live)).To(Equal([]string{next.Name}), "a started pod was stopped")
		}).WithContext(ctx).WithTimeout(7 * time.Second).Should(Succeed())
		finishPod(ctx, next.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			it := itemStatus(getGroup(ctx, g, "stuck"), next.Annotations[v1alpha1.AnnotationItem])
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastSuccess).NotTo(BeNil())
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}, SpecTimeout(time.Minute))
})
