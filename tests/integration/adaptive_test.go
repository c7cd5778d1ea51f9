package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("A lock with spec.adaptive", func() {
	It("starts at min, grants one slot more after 5 fast successes, and halves after a failure the breaker counts, the run already going on stopping nothing", func(ctx SpecContext) {
		groups := []string{"ad1", "ad2", "ad3"}
		tgt := trackLock(ctx, "tgt", groups...)
		lock := newLock("tgt", 3)
		lock.Spec.Adaptive = &v1alpha1.AdaptiveCapacity{Min: 1, Max: 3}
		create(ctx, newOaatType(typeName), lock,
			lockedGroup("ad1", []string{"tgt"}, "a", "b", "c"), lockedGroup("ad2", []string{"tgt"}, "a", "b", "c"), lockedGroup("ad3", []string{"tgt"}, "a", "b", "c"))

		By("granting min, one slot, at first")
		Eventually(func(g Gomega) {
			a := getLock(ctx, g, "tgt").Status.Adaptive
			g.Expect(a).NotTo(BeNil())
			g.Expect(a.Capacity).To(BeEquivalentTo(1))
			g.Expect(a.CapacityInUse).To(BeEquivalentTo(1))
		}).WithContext(ctx).Should(Succeed())
		liveAcross(ctx, 1, groups...)
		expectLiveAcross(ctx, 1, 2*time.Second, groups...)

		By("growing to 2 after 5 fast successes (no baseline yet: each counts as fast)")
		for range v1alpha1.AdaptiveGrowAfter {
			finishPod(ctx, liveAcross(ctx, 1, groups...)[0].Name, 0, "Completed")
		}
		live := liveAcross(ctx, 2, groups...)
		a := getLock(ctx, Default, "tgt").Status.Adaptive
		Expect(a.Capacity).To(BeEquivalentTo(2))
		Expect(a.LastChange).NotTo(BeNil())
		Expect(a.LastChange.Reason).To(Equal(v1alpha1.AdaptiveFastSuccesses))
		Expect(a.LastChange.From).To(BeEquivalentTo(1))
		Eventually(func(g Gomega) {
			events := eventsAbout(ctx, g, "OaatLock", "tgt", v1alpha1.ReasonCapacityAdapted)
			g.Expect(events).To(HaveLen(1))
			g.Expect(events[0].Type).To(Equal("Normal"))
		}).WithContext(ctx).Should(Succeed())

		By("halving to 1 after a failure, the other run going on, and starting nothing until it ends")
		finishPod(ctx, live[0].Name, 1, "Error")
		Eventually(func(g Gomega) {
			a := getLock(ctx, g, "tgt").Status.Adaptive
			g.Expect(a.Capacity).To(BeEquivalentTo(1))
			g.Expect(a.LastChange.Reason).To(Equal(v1alpha1.AdaptiveCountedFailure))
			g.Expect(a.LastChange.Message).To(ContainSubstring(live[0].Name))
		}).WithContext(ctx).Should(Succeed())
		expectLiveAcross(ctx, 1, 2*time.Second, groups...)

		By("granting one slot again once the other run has ended")
		finishPod(ctx, live[1].Name, 0, "Completed")
		liveAcross(ctx, 1, groups...)
		expectLiveAcross(ctx, 1, 2*time.Second, groups...)
		Expect(tgt.MaxLive(ns, "tgt")).To(Equal(2), "pods of the groups sharing the lock:\n%s", tgt.Describe(ns))
	})
})
