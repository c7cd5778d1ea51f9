//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// newRequest returns an OaatRun of item of the group, deleted 5s after it finished.
func newRequest(name, group, item string) *v1alpha1.OaatRun {
	return &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: group, Item: item, TTLAfterFinished: "5s"},
	}
}

// getRequest reads an OaatRun; nil when it does not exist.
func getRequest(ctx SpecContext, g Gomega, name string) *v1alpha1.OaatRun {
	req := &v1alpha1.OaatRun{}
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, req)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	return req
}

var _ = Describe("On-demand runs", func() {
	It("runs a requested item next, counts requests by result and deletes them after their TTL", func(ctx SpecContext) {
		prom.waitForTarget(ctx)
		create(ctx, newOaatType("three-seconds", "3s", 0), newGroup("ondemand", "three-seconds", "a", "b"))
		scheduled := waitForRunningPod(ctx, "ondemand")
		other := map[string]string{"a": "b", "b": "a"}[scheduled.Annotations[v1alpha1.AnnotationItem]]

		By("asking for " + other + " and for an unknown item while " + scheduled.Name + " runs")
		create(ctx, newRequest("now", "ondemand", other), newRequest("typo", "ondemand", "c"))
		Eventually(func(g Gomega) {
			typo := getRequest(ctx, g, "typo")
			g.Expect(typo).NotTo(BeNil())
			g.Expect(typo.Status.Phase).To(Equal(v1alpha1.OaatRunRejected))
			g.Expect(typo.Status.Reason).To(Equal(v1alpha1.ReasonUnknownItem))
		}).WithContext(ctx).WithTimeout(4 * time.Second).Should(Succeed())
		requested := waitForRunningPod(ctx, "ondemand", scheduled.Name)
		Expect(requested.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationOaatRun, "now"))
		Expect(requested.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, other))

		var finished time.Time
		Eventually(func(g Gomega) {
			req := getRequest(ctx, g, "now")
			g.Expect(req).NotTo(BeNil())
			g.Expect(req.Status.Phase).To(Equal(v1alpha1.OaatRunSucceeded), req.Status.Message)
			g.Expect(req.Status.PodName).To(Equal(requested.Name))
			finished = req.Status.FinishedAt.Time
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		sel := `{namespace="` + ns + `",group="ondemand"}`
		Eventually(func(g Gomega) {
			g.Expect(byResult(promQuery(ctx, g, "oaat_on_demand_runs_total"+sel))).To(Equal(map[string]float64{
				"succeeded": 1, "rejected": 1,
			}))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(getRequest(ctx, g, "now")).To(BeNil())
			g.Expect(getRequest(ctx, g, "typo")).To(BeNil())
		}).WithContext(ctx).WithTimeout(20*time.Second).Should(Succeed(), "finished requests are deleted 5s after they finished")
		Expect(time.Since(finished)).To(BeNumerically(">=", 4*time.Second))
	}, SpecTimeout(2*time.Minute))

	It("keeps a request waiting in a blackout window unless it ignores blackout windows", func(ctx SpecContext) {
		window, _ := openWindow()
		window.StopRunning = true
		group := newGroup("closed", "three-seconds", "a", "b")
		group.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{window}
		create(ctx, newOaatType("three-seconds", "3s", 0), group, newRequest("polite", "closed", "a"))
		Eventually(func(g Gomega) {
			req := getRequest(ctx, g, "polite")
			g.Expect(req).NotTo(BeNil())
			g.Expect(req.Status.Phase).To(Equal(v1alpha1.OaatRunPending))
			g.Expect(req.Status.Reason).To(Equal(v1alpha1.WaitBlackout))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		expectNoNewPod(ctx, "closed", 0, 2*time.Second)

		urgent := newRequest("urgent", "closed", "b")
		urgent.Spec.IgnoreBlackoutWindows = true
		create(ctx, urgent)
		Eventually(func(g Gomega) {
			req := getRequest(ctx, g, "urgent")
			g.Expect(req).NotTo(BeNil())
			g.Expect(req.Status.Phase).To(Equal(v1alpha1.OaatRunSucceeded), "the window's stopRunning does not stop it: %s", req.Status.Message)
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(itemsOf(tracker.PodsOf(ns, "closed"))).To(Equal([]string{"b"}))
		Expect(getRequest(ctx, Default, "polite").Status.Phase).To(Equal(v1alpha1.OaatRunPending))
	}, SpecTimeout(time.Minute))
})
