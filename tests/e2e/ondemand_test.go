//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// newOnDemandRun returns an OaatRun of item of the group, deleted 5s after it finished.
func newOnDemandRun(name, group, item string) *v1alpha1.OaatRun {
	run := support.Run(ns, name, group, item)
	run.Spec.TTLAfterFinished = "5s"
	return run
}

// getOnDemandRun reads an OaatRun; nil when it does not exist.
func getOnDemandRun(ctx SpecContext, g Gomega, name string) *v1alpha1.OaatRun {
	onDemandRun := &v1alpha1.OaatRun{}
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, onDemandRun)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	return onDemandRun
}

var _ = Describe("On-demand runs", func() {
	It("runs the item of an on-demand run next, counts on-demand runs by result and deletes them after their TTL", Serial, func(ctx SpecContext) {
		prom.waitForTarget(ctx)
		create(ctx, newOaatType("three-seconds", "3s", 0), newGroup("ondemand", "three-seconds", "a", "b"))
		scheduled := waitForRunningPod(ctx, "ondemand")
		other := map[string]string{"a": "b", "b": "a"}[scheduled.Annotations[v1alpha1.AnnotationItem]]

		By("asking for " + other + " and for an unknown item while " + scheduled.Name + " runs")
		create(ctx, newOnDemandRun("now", "ondemand", other), newOnDemandRun("typo", "ondemand", "c"))
		Eventually(func(g Gomega) {
			typo := getOnDemandRun(ctx, g, "typo")
			g.Expect(typo).NotTo(BeNil())
			g.Expect(typo.Status.Phase).To(Equal(v1alpha1.OaatRunRejected))
			g.Expect(typo.Status.Reason).To(Equal(string(v1alpha1.ReasonUnknownItem)))
		}).WithContext(ctx).WithTimeout(4 * time.Second).Should(Succeed())
		requested := waitForRunningPod(ctx, "ondemand", scheduled.Name)
		Expect(requested.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationOaatRun, "now"))
		Expect(requested.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, other))

		var finished time.Time
		Eventually(func(g Gomega) {
			onDemandRun := getOnDemandRun(ctx, g, "now")
			g.Expect(onDemandRun).NotTo(BeNil())
			g.Expect(onDemandRun.Status.Phase).To(Equal(v1alpha1.OaatRunSucceeded), onDemandRun.Status.Message)
			g.Expect(onDemandRun.Status.PodName).To(Equal(requested.Name))
			finished = onDemandRun.Status.FinishedAt.Time
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		sel := `{namespace="` + ns + `",group="ondemand"}`
		Eventually(func(g Gomega) {
			g.Expect(byResult(promQuery(ctx, g, "oaat_on_demand_runs_total"+sel))).To(Equal(map[string]float64{
				"succeeded": 1, "rejected": 1,
			}))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(getOnDemandRun(ctx, g, "now")).To(BeNil())
			g.Expect(getOnDemandRun(ctx, g, "typo")).To(BeNil())
		}).WithContext(ctx).WithTimeout(20*time.Second).Should(Succeed(), "finished on-demand runs are deleted 5s after they finished")
		Expect(time.Since(finished)).To(BeNumerically(">=", 4*time.Second))
	}, SpecTimeout(2*time.Minute))

	It("keeps an on-demand run waiting in a blackout window unless it ignores blackout windows", func(ctx SpecContext) {
		window, _ := openWindow()
		window.StopRunning = true
		group := newGroup("closed", "three-seconds", "a", "b")
		group.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{window}
		create(ctx, newOaatType("three-seconds", "3s", 0), group, newOnDemandRun("polite", "closed", "a"))
		Eventually(func(g Gomega) {
			onDemandRun := getOnDemandRun(ctx, g, "polite")
			g.Expect(onDemandRun).NotTo(BeNil())
			g.Expect(onDemandRun.Status.Phase).To(Equal(v1alpha1.OaatRunPending))
			g.Expect(onDemandRun.Status.Reason).To(Equal(string(v1alpha1.WaitBlackout)))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		expectNoNewPod(ctx, "closed", 0, 2*time.Second)

		urgent := newOnDemandRun("urgent", "closed", "b")
		urgent.Spec.IgnoreBlackoutWindows = true
		create(ctx, urgent)
		Eventually(func(g Gomega) {
			onDemandRun := getOnDemandRun(ctx, g, "urgent")
			g.Expect(onDemandRun).NotTo(BeNil())
			g.Expect(onDemandRun.Status.Phase).To(Equal(v1alpha1.OaatRunSucceeded), "the window's stopRunning does not stop it: %s", onDemandRun.Status.Message)
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(itemsOf(tracker.PodsOf(ns, "closed"))).To(Equal([]string{"b"}))
		Expect(getOnDemandRun(ctx, Default, "polite").Status.Phase).To(Equal(v1alpha1.OaatRunPending))
	}, SpecTimeout(time.Minute))
})
