package integration

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// prioritized is a group of item a naming nas, of the priority.
func prioritized(name string, priority int32) *v1alpha1.OaatGroup {
	g := lockedGroup(name, []string{"nas"}, "a")
	g.Spec.Priority = ptr.To(priority)
	return g
}

var _ = Describe("Group priority on a lock", func() {
	It("grants the higher priority first, up to the lock's maxPriority, counts the request it passes over, and promotes it after PassLimit passes", func(ctx SpecContext) {
		all := []string{"first", "archive", "urgent-1", "urgent-2", "urgent-3", "urgent-4"}
		nas := trackLock(ctx, "nas", all...)
		lock := newLock("nas", 1)
		lock.Spec.MaxPriority = ptr.To[int32](5)
		create(ctx, newOaatType(typeName), lock, lockedGroup("first", []string{"nas"}, "a"))
		current := waitForLivePod(ctx, "first")
		create(ctx, lockedGroup("archive", []string{"nas"}, "a"))
		expectWaiting(ctx, "archive", "nas")

		for i := 1; i <= v1alpha1.PassLimit; i++ {
			name := fmt.Sprintf("urgent-%d", i)
			By(fmt.Sprintf("granting %s, of priority 9 honoured as 5, before the earlier request of archive (or one of the same second: archive comes first by name)", name))
			create(ctx, prioritized(name, 9))
			expectWaiting(ctx, name, "nas")
			Eventually(func(g Gomega) {
				g.Expect(getGroup(ctx, g, name).Status.LockWait.Priority).To(BeEquivalentTo(5))
			}).WithContext(ctx).Should(Succeed())
			finishPod(ctx, current.Name, 0, "Completed")
			current = waitForLivePod(ctx, name)
			Eventually(func(g Gomega) {
				passed := getLock(ctx, g, "nas").Status.PassedOver
				g.Expect(passed).To(HaveLen(1))
				g.Expect(passed[0].Group).To(Equal("archive"))
				g.Expect(passed[0].Count).To(BeEquivalentTo(i))
			}).WithContext(ctx).Should(Succeed())
		}

		By("promoting archive, passed over PassLimit times: it goes before urgent-4")
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "archive").Status.LockWait.PromotedAt).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())
		create(ctx, prioritized("urgent-4", 9))
		expectWaiting(ctx, "urgent-4", "nas")
		finishPod(ctx, current.Name, 0, "Completed")
		archive := waitForLivePod(ctx, "archive")
		expectWaiting(ctx, "urgent-4", "nas")
		Eventually(func(g Gomega) {
			g.Expect(getLock(ctx, g, "nas").Status.PassedOver).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		finishPod(ctx, archive.Name, 0, "Completed")
		finishPod(ctx, waitForLivePod(ctx, "urgent-4").Name, 0, "Completed")
		Expect(nas.MaxLive(ns, "nas")).To(Equal(1), "pods of the groups sharing the lock:\n%s", nas.Describe(ns))
	}, SpecTimeout(specTimeout))

	It("rejects a priority and a maxPriority out of 0..1000", func(ctx SpecContext) {
		expectRejected(ctx, prioritized("too-high", 1001), "spec.priority: Invalid value: 1001")
		l := newLock("negative", 1)
		l.Spec.MaxPriority = ptr.To[int32](-1)
		expectRejected(ctx, l, "spec.maxPriority: Invalid value: -1")
	}, SpecTimeout(specTimeout))
})
