package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Restarting the operator", func() {
	It("creates no second pod when the manager restarts mid-run and records the outcome once", func(ctx SpecContext) {
		items := [2]string{"a", "b"}
		create(ctx, newOaatType(typeName), newGroup("resilient", items[:]...))
		first := waitForLivePod(ctx, "resilient")
		item := first.Annotations[v1alpha1.AnnotationItem]
		markRunning(ctx, first.Name)
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "resilient").Status.CurrentRun).To(HaveField("PodName", first.Name))
		}).WithContext(ctx).Should(Succeed())

		By("restarting the manager while the pod runs")
		restartManager()
		Consistently(func(g Gomega) {
			pods, err := podsOf(ctx, "resilient")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(podNames(pods)).To(ConsistOf(first.Name))
			group := getGroup(ctx, g, "resilient")
			g.Expect(group.Status.CurrentRun).NotTo(BeNil())
			g.Expect(group.Status.CurrentRun.Item).To(Equal(item))
			g.Expect(group.Status.CurrentRun.PodName).To(Equal(first.Name))
			g.Expect(group.Status.RunCount).To(Equal(int64(1)))
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())

		By("recording the outcome of the run once")
		finishedAt := finishPod(ctx, first.Name, 0, "Completed")
		second := waitForLivePod(ctx, "resilient", first.Name)
		Expect(second.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, otherItem(items, item)))
		Expect(second.Labels).To(HaveKeyWithValue(v1alpha1.LabelRun, "2"))
		recordedOnce := func(g Gomega) {
			group := getGroup(ctx, g, "resilient")
			it := itemStatus(group, item)
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastSuccess).NotTo(BeNil())
			g.Expect(it.LastSuccess.Time).To(BeTemporally("==", finishedAt.Time))
			g.Expect(it.FailureCount).To(BeZero())
			g.Expect(it.LastFailure).To(BeNil())
			g.Expect(it.LastPodName).To(Equal(first.Name))
			g.Expect(group.Status.RunCount).To(Equal(int64(2)))
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", second.Name))
			succeeded := groupEvents(ctx, g, "resilient", v1alpha1.ReasonRunSucceeded)
			g.Expect(occurrences(succeeded)).To(Equal(1), "RunSucceeded events: %v", succeeded)
			g.Expect(succeeded[0].Note).To(ContainSubstring(first.Name))
			g.Expect(metricValue(g, "oaat_item_runs_total", map[string]string{
				"namespace": ns, "group": "resilient", "item": item, "result": "succeeded"})).To(Equal(1.0))
		}
		Eventually(recordedOnce).WithContext(ctx).Should(Succeed())
		Consistently(recordedOnce).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("records a run that ended while the operator was down, once", func(ctx SpecContext) {
		items := [2]string{"a", "b"}
		create(ctx, newOaatType(typeName), newGroup("unattended", items[:]...))
		first := waitForLivePod(ctx, "unattended")
		item := first.Annotations[v1alpha1.AnnotationItem]
		markRunning(ctx, first.Name)
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "unattended").Status.CurrentRun).To(HaveField("PodName", first.Name))
		}).WithContext(ctx).Should(Succeed())

		By("failing the pod while no manager runs")
		stopManager()
		failedAt := finishPod(ctx, first.Name, 2, "Error")
		stopManager = startManager()

		By("recording the failure once and starting the other item")
		second := waitForLivePod(ctx, "unattended", first.Name)
		Expect(second.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, otherItem(items, item)))
		recordedOnce := func(g Gomega) {
			group := getGroup(ctx, g, "unattended")
			it := itemStatus(group, item)
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.FailureCount).To(Equal(int32(1)))
			g.Expect(it.LastFailure).NotTo(BeNil())
			g.Expect(it.LastFailure.Time).To(BeTemporally("==", failedAt.Time))
			g.Expect(it.LastExitCode).To(HaveValue(Equal(int32(2))))
			g.Expect(group.Status.RunCount).To(Equal(int64(2)))
			g.Expect(occurrences(groupEvents(ctx, g, "unattended", v1alpha1.ReasonRunFailed))).To(Equal(1))
		}
		Eventually(recordedOnce).WithContext(ctx).Should(Succeed())
		Consistently(recordedOnce).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("fails a run whose pod was never created, once, when the operator stopped in between", func(ctx SpecContext) {
		By("leaving a run intent without its pod, as an operator stopped between its two writes would")
		stopManager()
		create(ctx, newOaatType(typeName), newGroup("interrupted-start", "a"))
		startedAt := metav1.NewTime(time.Now().Truncate(time.Second))
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			group := getGroup(ctx, Default, "interrupted-start")
			group.Status.RunCount = 1
			group.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "a", PodName: "interrupted-start-a-never-1", StartedAt: startedAt}
			group.Status.Items = []v1alpha1.ItemStatus{{Name: "a", LastStarted: &startedAt}}
			return k8sClient.Status().Update(ctx, group)
		})).To(Succeed())
		stopManager = startManager()

		By("recording the missing pod as a failure and starting a new run")
		pod := waitForLivePod(ctx, "interrupted-start")
		Expect(pod.Labels).To(HaveKeyWithValue(v1alpha1.LabelRun, "2"))
		recordedOnce := func(g Gomega) {
			group := getGroup(ctx, g, "interrupted-start")
			it := itemStatus(group, "a")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.FailureCount).To(Equal(int32(1)))
			g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonPodNotFound)))
			g.Expect(it.LastPodName).To(Equal("interrupted-start-a-never-1"))
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", pod.Name))
			g.Expect(occurrences(groupEvents(ctx, g, "interrupted-start", v1alpha1.ReasonRunFailed))).To(Equal(1))
		}
		Eventually(recordedOnce).WithContext(ctx).Should(Succeed())
		Consistently(recordedOnce).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())
	}, SpecTimeout(specTimeout))
})
