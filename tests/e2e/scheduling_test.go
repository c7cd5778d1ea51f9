//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// openWindow is a blackout window in UTC that opened a minute ago and closes in half an hour,
// and when it closes.
func openWindow() (v1alpha1.BlackoutWindow, time.Time) {
	start := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	end := start.Add(31 * time.Minute)
	return v1alpha1.BlackoutWindow{Start: start.Format("15:04"), End: end.Format("15:04")}, end
}

// expectNoNewPod checks for a while that the group's pods stay those the watcher has seen so far.
func expectNoNewPod(ctx SpecContext, group string, seen int, d time.Duration) {
	GinkgoHelper()
	Consistently(func(g Gomega) {
		g.Expect(tracker.PodsOf(ns, group)).To(HaveLen(seen))
	}).WithContext(ctx).WithTimeout(d).Should(Succeed(), "group %s started another pod", group)
}

var _ = Describe("Scheduling controls", func() {
	It("starts nothing inside a blackout window and says until when each item waits", func(ctx SpecContext) {
		window, end := openWindow()
		group := newGroup("blackout", "quick", "a", "b")
		group.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{window}
		create(ctx, newOaatType("quick", "1s", 0), group)

		Eventually(func(g Gomega) {
			status := getGroup(ctx, g, "blackout").Status
			g.Expect(status.Items).To(HaveLen(2))
			for _, it := range status.Items {
				g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitBlackout), "item %s", it.Name)
				g.Expect(it.NextEligibleAt).NotTo(BeNil(), "item %s", it.Name)
				g.Expect(it.NextEligibleAt.Time).To(BeTemporally("==", end), "item %s", it.Name)
			}
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		expectNoNewPod(ctx, "blackout", 0, 3*time.Second)

		By("moving the window away from now")
		updateGroup(ctx, "blackout", func(g *v1alpha1.OaatGroup) {
			later := end.Add(time.Hour)
			g.Spec.BlackoutWindows[0].Start, g.Spec.BlackoutWindows[0].End = later.Format("15:04"), later.Add(time.Hour).Format("15:04")
		})
		Eventually(func(g Gomega) {
			for _, name := range []string{"a", "b"} {
				it := itemOf(g, getGroup(ctx, g, "blackout"), name)
				g.Expect(it.LastSuccess).NotTo(BeNil(), "item %s", name)
				g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitSucceededRecently), "item %s", name)
			}
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	}, SpecTimeout(time.Minute))

	It("does not start an item whose expected run would reach into an avoidOverrun window", func(ctx SpecContext) {
		group := newGroup("overrun", "quick", "long", "short")
		group.Spec.Suspend = true
		create(ctx, newOaatType("quick", "1s", 0), group)
		Eventually(func(g Gomega) {
			g.Expect(itemNames(getGroup(ctx, g, "overrun"))).To(ConsistOf("long", "short"))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("recording that long takes an hour and short a second, then opening the group to a window in 10 minutes")
		updateGroupStatus(ctx, "overrun", func(status *v1alpha1.OaatGroupStatus) {
			for i := range status.Items {
				status.Items[i].RecentRunSeconds = map[string][]int64{"long": {3600, 60}, "short": {1}}[status.Items[i].Name]
			}
		})
		start := time.Now().UTC().Truncate(time.Minute).Add(10 * time.Minute)
		end := start.Add(30 * time.Minute)
		updateGroup(ctx, "overrun", func(g *v1alpha1.OaatGroup) {
			g.Spec.Suspend = false
			g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: start.Format("15:04"), End: end.Format("15:04"), AvoidOverrun: true}}
		})
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "overrun")
			g.Expect(itemOf(g, group, "short").LastSuccess).NotTo(BeNil(), "short fits before the window")
			long := itemOf(g, group, "long")
			g.Expect(long.WaitReason).To(Equal(v1alpha1.WaitOverrun))
			g.Expect(long.NextEligibleAt).NotTo(BeNil())
			g.Expect(long.NextEligibleAt.Time).To(BeTemporally("==", end))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		expectNoNewPod(ctx, "overrun", 1, 2*time.Second)
	}, SpecTimeout(time.Minute))

	It("stops a running item when a window with stopRunning opens and records it as interrupted", Serial, func(ctx SpecContext) {
		prom.waitForTarget(ctx)
		create(ctx, newOaatType("slow", "60s", 0), newGroup("interrupted", "slow", "only"))
		pod := waitForRunningPod(ctx, "interrupted")

		By("opening a stopRunning window while " + pod.Name + " runs")
		window, end := openWindow()
		window.StopRunning = true
		updateGroup(ctx, "interrupted", func(g *v1alpha1.OaatGroup) { g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{window} })
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "interrupted")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			it := itemOf(g, group, "only")
			g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonInterrupted)))
			g.Expect(it.LastPodName).To(Equal(pod.Name))
			g.Expect(it.LastFailure).To(BeNil(), "an interrupted run is not a failure")
			g.Expect(it.FailureCount).To(BeZero())
			g.Expect(it.LastSuccess).To(BeNil())
			g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitBlackout))
			g.Expect(it.NextEligibleAt.Time).To(BeTemporally("==", end))
			g.Expect(getPod(ctx, g, pod.Name)).To(BeNil(), "the interrupted pod is deleted")
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(groupEvents(ctx, Default, "interrupted", v1alpha1.ReasonRunStopping, v1alpha1.ReasonRunInterrupted)).To(HaveLen(2))
		Expect(groupEvents(ctx, Default, "interrupted", v1alpha1.ReasonRunFailed)).To(BeEmpty())
		expectNoNewPod(ctx, "interrupted", 1, 3*time.Second)

		sel := `{namespace="` + ns + `",group="interrupted"}`
		Eventually(func(g Gomega) {
			g.Expect(byRun(promQuery(ctx, g, "oaat_item_runs_total"+sel))).To(Equal(map[string]float64{
				runKey("interrupted", "only", "interrupted"): 1,
			}))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
	}, SpecTimeout(2*time.Minute))

	It("lets a running item finish when suspended, starts nothing until resumed, and honours pause_new_jobs only when true",
		func(ctx SpecContext) {
			create(ctx, newOaatType("short", "4s", 0), newGroup("suspended", "short", "a", "b", "c"))
			first := waitForRunningPod(ctx, "suspended")

			By("suspending while " + first.Name + " runs")
			updateGroup(ctx, "suspended", func(g *v1alpha1.OaatGroup) { g.Spec.Suspend = true })
			Eventually(func(g Gomega) {
				group := getGroup(ctx, g, "suspended")
				expectCondition(g, group, v1alpha1.ConditionSuspended, metav1.ConditionTrue, v1alpha1.ReasonSpecSuspend)
				g.Expect(group.Status.CurrentRun).To(BeNil(), "the running item finishes")
				g.Expect(itemOf(g, group, first.Annotations[v1alpha1.AnnotationItem]).LastSuccess).NotTo(BeNil())
				for _, it := range group.Status.Items {
					if it.LastSuccess == nil {
						g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitSuspended), "item %s", it.Name)
					}
				}
			}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
			expectNoNewPod(ctx, "suspended", 1, 3*time.Second)

			By("switching to the pause_new_jobs annotation: a value other than true does not pause")
			updateGroup(ctx, "suspended", func(g *v1alpha1.OaatGroup) {
				g.Spec.Suspend = false
				g.Annotations = map[string]string{v1alpha1.AnnotationPauseNewJobs: "true"}
			})
			Eventually(func(g Gomega) {
				expectCondition(g, getGroup(ctx, g, "suspended"), v1alpha1.ConditionSuspended, metav1.ConditionTrue, v1alpha1.ReasonPauseAnnotation)
			}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
			expectNoNewPod(ctx, "suspended", 1, 2*time.Second)
			updateGroup(ctx, "suspended", func(g *v1alpha1.OaatGroup) { g.Annotations[v1alpha1.AnnotationPauseNewJobs] = "false" })
			second := waitForRunningPod(ctx, "suspended", first.Name)
			Expect(getGroup(ctx, Default, "suspended").Status.Conditions).To(ContainElement(And(
				HaveField("Type", v1alpha1.ConditionSuspended), HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", string(v1alpha1.ReasonResumed)))))
			Expect(second.Annotations[v1alpha1.AnnotationItem]).NotTo(Equal(first.Annotations[v1alpha1.AnnotationItem]))
			Eventually(func(g Gomega) []eventsv1.Event {
				return groupEvents(ctx, g, "suspended", v1alpha1.ReasonSpecSuspend, v1alpha1.ReasonPauseAnnotation, v1alpha1.ReasonResumed)
			}).WithContext(ctx).WithTimeout(10 * time.Second).Should(HaveLen(3))
		}, SpecTimeout(2*time.Minute))
})
