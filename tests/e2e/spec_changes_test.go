//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Changes of the spec", func() {
	It("waits for a missing OaatType and runs once it is created", func(ctx SpecContext) {
		create(ctx, newGroup("early", "late", "only"))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "early")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonOaatTypeNotFound)
			g.Expect(conditionOf(group.Status.Conditions, v1alpha1.ConditionReady).Message).To(ContainSubstring(`"late"`))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(podNames(podsOf(ctx, g, "early"))).To(BeEmpty())
			g.Expect(tracker.PodsOf(ns, "early")).To(BeEmpty())
			g.Expect(getGroup(ctx, g, "early").Status.CurrentRun).To(BeNil())
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) []eventsv1.Event {
			return groupEvents(ctx, g, "early", v1alpha1.ReasonOaatTypeNotFound)
		}).WithContext(ctx).WithTimeout(10*time.Second).Should(ContainElement(HaveField("Type", corev1.EventTypeWarning)),
			"a warning event says why nothing runs")

		By("creating the OaatType")
		create(ctx, newOaatType("late", "2s", 0))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "early")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
			g.Expect(group.Status.CurrentRun).To(BeNil())
			it := itemStatus(group, "only")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastSuccess).NotTo(BeNil())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(itemsOf(tracker.PodsOf(ns, "early"))).To(Equal([]string{"only"}))
	}, SpecTimeout(2*time.Minute))

	It("keeps the running pod when the item list changes, runs an added item and forgets a removed one",
		func(ctx SpecContext) {
			create(ctx, newOaatType("steady", "10s", 0), newGroup("edited", "steady", "first", "second"))
			pod := waitForRunningPod(ctx, "edited")
			running := pod.Annotations[v1alpha1.AnnotationItem]
			removed := map[string]string{"first": "second", "second": "first"}[running]
			Expect(removed).NotTo(BeEmpty(), "item of pod %s: %q", pod.Name, running)

			By("replacing " + removed + " by added while " + running + " runs")
			updateGroup(ctx, "edited", func(group *v1alpha1.OaatGroup) {
				group.Spec.OaatItems = []string{running, "added"}
			})
			Eventually(func(g Gomega) {
				group := getGroup(ctx, g, "edited")
				g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation))
				g.Expect(itemNames(group)).To(ConsistOf(running, "added"), "the removed item's entry is dropped")
				g.Expect(group.Status.ItemCount).To(BeEquivalentTo(2))
			}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
			Consistently(func(g Gomega) {
				current := getPod(ctx, g, pod.Name)
				g.Expect(current).NotTo(BeNil(), "the running pod was deleted")
				g.Expect(current.UID).To(Equal(pod.UID))
				g.Expect(current.DeletionTimestamp).To(BeNil(), "the running pod is being deleted")
				g.Expect(current.Status.Phase).To(Equal(corev1.PodRunning))
				cr := getGroup(ctx, g, "edited").Status.CurrentRun
				g.Expect(cr).NotTo(BeNil())
				g.Expect(cr.PodName).To(Equal(pod.Name))
				g.Expect(tracker.PodsOf(ns, "edited")).To(HaveLen(1))
			}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())

			By("waiting for the running item to finish and the added one to run")
			Eventually(func(g Gomega) {
				group := getGroup(ctx, g, "edited")
				g.Expect(group.Status.CurrentRun).To(BeNil())
				first := itemStatus(group, running)
				g.Expect(first).NotTo(BeNil())
				g.Expect(first.LastSuccess).NotTo(BeNil())
				g.Expect(first.LastPodName).To(Equal(pod.Name))
				added := itemStatus(group, "added")
				g.Expect(added).NotTo(BeNil())
				g.Expect(added.LastSuccess).NotTo(BeNil())
				g.Expect(itemNames(group)).To(ConsistOf(running, "added"))
			}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
			Expect(itemsOf(tracker.PodsOf(ns, "edited"))).To(Equal([]string{running, "added"}),
				"the removed item never ran")
		}, SpecTimeout(2*time.Minute))
})

func conditionOf(conditions []metav1.Condition, condType string) metav1.Condition {
	for _, c := range conditions {
		if c.Type == condType {
			return c
		}
	}
	return metav1.Condition{}
}
