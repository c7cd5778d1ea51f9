//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Running items", func() {
	It("runs each item of a two-item group once, one at a time, and records the outcome", Label("floor"), func(ctx SpecContext) {
		create(ctx, newOaatType("quick", "2s", 0), newGroup("basic", "quick", "alpha", "beta"))

		By("waiting until both items have succeeded")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "basic")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			for _, item := range []string{"alpha", "beta"} {
				it := itemStatus(group, item)
				g.Expect(it).NotTo(BeNil(), "status of item %s", item)
				g.Expect(it.LastSuccess).NotTo(BeNil(), "lastSuccess of item %s", item)
			}
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())

		By("checking the status of the group and of each item")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "basic")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
			expectCondition(g, group, v1alpha1.ConditionRunning, metav1.ConditionFalse, v1alpha1.ReasonIdle)
			g.Expect(group.Status.CurrentRun).To(BeNil())
			g.Expect(group.Status.ItemCount).To(BeEquivalentTo(2))
			g.Expect(group.Status.RunCount).To(BeEquivalentTo(2))
			g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation))
			for _, item := range []string{"alpha", "beta"} {
				it := itemStatus(group, item)
				g.Expect(it.FailureCount).To(BeZero(), "failureCount of %s", item)
				g.Expect(it.LastFailure).To(BeNil(), "lastFailure of %s", item)
				g.Expect(it.LastExitCode).To(Equal(ptr.To[int32](0)), "lastExitCode of %s", item)
				g.Expect(it.LastReason).To(Equal("Completed"), "lastReason of %s", item)
				g.Expect(it.LastStarted).NotTo(BeNil(), "lastStarted of %s", item)
				g.Expect(it.LastSuccess.Time).NotTo(BeTemporally("<", it.LastStarted.Time), "lastSuccess of %s", item)
				pod := getPod(ctx, g, it.LastPodName)
				g.Expect(pod).NotTo(BeNil(), "lastPodName %q of %s names no pod", it.LastPodName, item)
				g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), "pod %s", pod.Name)
				g.Expect(pod.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, item))
				g.Expect(metav1.IsControlledBy(pod, group)).To(BeTrue(), "pod %s is controlled by the group", pod.Name)
			}
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("checking that each item ran once, and no more")
		Consistently(func(g Gomega) {
			recs := tracker.PodsOf(ns, "basic")
			g.Expect(itemsOf(recs)).To(ConsistOf("alpha", "beta"))
			group := getGroup(ctx, g, "basic")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			for _, r := range recs {
				g.Expect(itemStatus(group, r.Item).LastPodName).To(Equal(r.Name))
			}
		}).WithContext(ctx).WithTimeout(4 * time.Second).Should(Succeed())
	}, SpecTimeout(2*time.Minute))

	It("starts the item that never succeeded, then the one that succeeded longest ago, and not one that succeeded within frequency",
		func(ctx SpecContext) {
			By("creating the group before its OaatType, so that nothing starts")
			create(ctx, newGroup("seeded", "later", "old", "never", "recent"))
			Eventually(func(g Gomega) {
				expectCondition(g, getGroup(ctx, g, "seeded"), v1alpha1.ConditionReady, metav1.ConditionFalse,
					v1alpha1.ReasonOaatTypeNotFound)
			}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

			By("seeding the history: old succeeded two days ago, recent just now, never has no entry")
			now := metav1.NewTime(time.Now().Truncate(time.Second))
			twoDaysAgo := metav1.NewTime(now.Add(-48 * time.Hour))
			updateGroupStatus(ctx, "seeded", func(st *v1alpha1.OaatGroupStatus) {
				st.Items = []v1alpha1.ItemStatus{
					{Name: "old", LastSuccess: &twoDaysAgo},
					{Name: "recent", LastSuccess: &now},
				}
			})
			Eventually(func(g Gomega) {
				group := getGroup(ctx, g, "seeded")
				expectTime(g, itemStatus(group, "old"), lastSuccessOf, twoDaysAgo)
				expectTime(g, itemStatus(group, "recent"), lastSuccessOf, now)
			}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
			Expect(tracker.PodsOf(ns, "seeded")).To(BeEmpty(), "a pod started without an OaatType")

			By("creating the OaatType")
			create(ctx, newOaatType("later", "2s", 0))

			By("waiting until never and old have succeeded")
			Eventually(func(g Gomega) {
				group := getGroup(ctx, g, "seeded")
				g.Expect(group.Status.CurrentRun).To(BeNil())
				g.Expect(itemStatus(group, "never")).NotTo(BeNil())
				g.Expect(itemStatus(group, "never").LastSuccess).NotTo(BeNil())
				g.Expect(itemStatus(group, "old").LastSuccess.After(now.Time)).To(BeTrue(), "old ran again")
			}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
			Expect(itemsOf(tracker.PodsOf(ns, "seeded"))).To(Equal([]string{"never", "old"}),
				"the first pod runs the item that never succeeded, the second the one that succeeded two days ago")

			By("checking that recent does not run within its frequency")
			Consistently(func(g Gomega) {
				g.Expect(itemsOf(tracker.PodsOf(ns, "seeded"))).To(Equal([]string{"never", "old"}))
				group := getGroup(ctx, g, "seeded")
				g.Expect(group.Status.CurrentRun).To(BeNil())
				expectTime(g, itemStatus(group, "recent"), lastSuccessOf, now)
				g.Expect(itemStatus(group, "recent").LastStarted).To(BeNil())
			}).WithContext(ctx).WithTimeout(4 * time.Second).Should(Succeed())
			Eventually(func(g Gomega) {
				expectCondition(g, getGroup(ctx, g, "seeded"), v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
			}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
		}, SpecTimeout(2*time.Minute))

	It("waits out the failure cool-off, retries, and resets failureCount on success", func(ctx SpecContext) {
		const coolOff = 10 * time.Second
		create(ctx, newOaatType("flaky", "2s", 1))
		group := newGroup("cooloff", "flaky", "only")
		group.Spec.FailureCoolOff = "10s"
		create(ctx, group)

		By("waiting for the first run to fail")
		var lastFailure metav1.Time
		var failedPod string
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "cooloff")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			it := itemStatus(group, "only")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.FailureCount).To(BeEquivalentTo(1))
			g.Expect(it.LastFailure).NotTo(BeNil())
			g.Expect(it.LastExitCode).To(Equal(ptr.To[int32](1)))
			g.Expect(it.LastReason).To(Equal("Error"))
			g.Expect(it.LastSuccess).To(BeNil())
			lastFailure, failedPod = *it.LastFailure, it.LastPodName
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(time.Since(lastFailure.Time)).To(BeNumerically("<", 5*time.Second),
			"the failure was seen too late to check the cool-off")

		By("making the next run succeed; the change of the OaatType must not cut the cool-off short")
		updateType(ctx, "flaky", func(ot *v1alpha1.OaatType) {
			ot.Spec.Template.Annotations[annotationTestExitCode] = "0"
		})
		Consistently(func(g Gomega) {
			g.Expect(podNames(podsOf(ctx, g, "cooloff"))).To(Equal([]string{failedPod}))
			g.Expect(tracker.PodsOf(ns, "cooloff")).To(HaveLen(1))
		}).WithContext(ctx).WithTimeout(time.Until(lastFailure.Add(coolOff-time.Second))).Should(Succeed(),
			"no new pod within the cool-off of %s after the failure at %s", coolOff, lastFailure.Format(time.RFC3339))

		By("waiting for the retry to succeed")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "cooloff")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			it := itemStatus(group, "only")
			g.Expect(it.LastSuccess).NotTo(BeNil())
			g.Expect(it.FailureCount).To(BeZero())
			g.Expect(it.LastExitCode).To(Equal(ptr.To[int32](0)))
			expectTime(g, it, lastFailureOf, lastFailure)
			g.Expect(it.LastPodName).NotTo(Equal(failedPod))
		}).WithContext(ctx).WithTimeout(40 * time.Second).Should(Succeed())
		recs := tracker.PodsOf(ns, "cooloff")
		Expect(recs).To(HaveLen(2))
		Expect(recs[1].Created.Time).NotTo(BeTemporally("<", lastFailure.Add(coolOff)),
			"the retry %s was created before the cool-off ended", recs[1].Name)
	}, SpecTimeout(2*time.Minute))
})

func lastSuccessOf(it *v1alpha1.ItemStatus) *metav1.Time { return it.LastSuccess }
func lastFailureOf(it *v1alpha1.ItemStatus) *metav1.Time { return it.LastFailure }

// expectTime checks a time of an item's status: the entry exists and the time is want.
func expectTime(g Gomega, it *v1alpha1.ItemStatus, field func(*v1alpha1.ItemStatus) *metav1.Time, want metav1.Time) {
	g.Expect(it).NotTo(BeNil(), "item status entry")
	got := field(it)
	g.Expect(got).NotTo(BeNil(), "time of item %s", it.Name)
	g.Expect(got.Time).To(BeTemporally("==", want.Time), "time of item %s", it.Name)
}
