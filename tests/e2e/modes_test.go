//go:build e2e

package e2e

import (
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

var _ = Describe("Modes and history", func() {
	It("runs each item once in mode EachOnce, then again for an added item or a reset", func(ctx SpecContext) {
		group := newGroup("once", "quick", "a", "b")
		group.Spec.Mode = v1alpha1.ModeEachOnce
		group.Spec.Frequency = "1s"
		create(ctx, newOaatType("quick", "1s", 0), group)

		expectComplete := func(items int) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				group := getGroup(ctx, g, "once")
				expectCondition(g, group, v1alpha1.ConditionComplete, metav1.ConditionTrue, v1alpha1.ReasonAllSucceeded)
				for _, it := range group.Status.Items {
					g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitDone), "item %s", it.Name)
				}
				g.Expect(tracker.PodsOf(ns, "once")).To(HaveLen(items))
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		}
		expectComplete(2)
		expectNoNewPod(ctx, "once", 2, 3*time.Second) // frequency 1s does not bring them back

		By("adding an item")
		updateGroup(ctx, "once", func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = append(g.Spec.OaatItems, "c") })
		expectComplete(3)
		Expect(itemsOf(tracker.PodsOf(ns, "once"))[2]).To(Equal("c"))

		By("resetting the group")
		updateGroup(ctx, "once", func(g *v1alpha1.OaatGroup) {
			g.Annotations = map[string]string{v1alpha1.AnnotationReset: "round-2"}
		})
		expectComplete(6)
		Expect(getGroup(ctx, Default, "once").Status.ObservedReset).To(Equal("round-2"))
		Expect(groupEvents(ctx, Default, "once", v1alpha1.ReasonGroupReset)).To(HaveLen(1))
		items := itemsOf(tracker.PodsOf(ns, "once"))[3:]
		slices.Sort(items)
		Expect(items).To(Equal([]string{"a", "b", "c"}))
	}, SpecTimeout(2*time.Minute))

	It("keeps podHistory finished pods per item and result", func(ctx SpecContext) {
		group := newGroup("history", "quick", "only")
		group.Spec.Frequency = "1s"
		two := int32(2)
		group.Spec.PodHistory = &v1alpha1.PodHistory{Succeeded: &two}
		create(ctx, newOaatType("quick", "1s", 0), group)

		Eventually(func(g Gomega) {
			g.Expect(len(tracker.PodsOf(ns, "history"))).To(BeNumerically(">=", 5))
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			var finished []string
			for _, p := range podsOf(ctx, g, "history") {
				if podbuild.Terminal(&p) && p.DeletionTimestamp == nil {
					finished = append(finished, p.Labels[v1alpha1.LabelRun])
				}
			}
			g.Expect(finished).To(HaveLen(2), "finished pods kept: runs %v", finished)
			current := getGroup(ctx, g, "history").Status
			latest := current.RunCount
			if current.CurrentRun != nil {
				latest--
			}
			g.Expect(finished).To(ConsistOf(itoa(int(latest)), itoa(int(latest-1))), "the two latest finished runs")
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}, SpecTimeout(90*time.Second))
})
