package integration

import (
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Running the items of a group", func() {
	It("runs two items one after the other and records the outcome of each", func(ctx SpecContext) {
		items := [2]string{"a", "b"}
		create(ctx, newOaatType(typeName), newGroup("backups", items[:]...))

		By("starting one of the items")
		first := waitForLivePod(ctx, "backups")
		firstItem := first.Annotations[v1alpha1.AnnotationItem]
		Expect(items).To(ContainElement(firstItem))
		secondItem := otherItem(items, firstItem)
		group := getGroup(ctx, Default, "backups")
		expectItemPod(first, group, firstItem, "1")

		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "backups")
			g.Expect(group.Status.CurrentRun).NotTo(BeNil())
			g.Expect(group.Status.CurrentRun.Item).To(Equal(firstItem))
			g.Expect(group.Status.CurrentRun.PodName).To(Equal(first.Name))
			g.Expect(group.Status.RunCount).To(Equal(int64(1)))
			g.Expect(group.Status.ItemCount).To(Equal(int32(2)))
			g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation))
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
			expectCondition(g, group, v1alpha1.ConditionRunning, metav1.ConditionTrue, v1alpha1.ReasonItemRunning)
			g.Expect(itemStatus(group, firstItem)).NotTo(BeNil())
			g.Expect(itemStatus(group, firstItem).LastStarted).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())

		By("not starting the other item while the first runs")
		markRunning(ctx, first.Name)
		Consistently(func(g Gomega) {
			pods, err := podsOf(ctx, "backups")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(podNames(pods)).To(ConsistOf(first.Name))
		}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())

		By("recording the success of the first item")
		firstEnd := finishPod(ctx, first.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			it := itemStatus(getGroup(ctx, g, "backups"), firstItem)
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastSuccess).NotTo(BeNil())
			g.Expect(it.LastSuccess.Time).To(BeTemporally("==", firstEnd.Time))
			g.Expect(it.FailureCount).To(BeZero())
			g.Expect(it.LastFailure).To(BeNil())
			g.Expect(it.LastExitCode).To(HaveValue(BeZero()))
			g.Expect(it.LastReason).To(Equal("Completed"))
			g.Expect(it.LastPodName).To(Equal(first.Name))
		}).WithContext(ctx).Should(Succeed())

		By("starting the second item once the first has finished")
		second := waitForLivePod(ctx, "backups", first.Name)
		expectItemPod(second, group, secondItem, "2")
		Expect(second.CreationTimestamp.Time).NotTo(BeTemporally("<", firstEnd.Time))
		markRunning(ctx, second.Name)
		secondEnd := finishPod(ctx, second.Name, 0, "Completed")

		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "backups")
			for item, end := range map[string]metav1.Time{firstItem: firstEnd, secondItem: secondEnd} {
				it := itemStatus(group, item)
				g.Expect(it).NotTo(BeNil(), "status of item %s", item)
				g.Expect(it.LastSuccess).NotTo(BeNil(), "lastSuccess of item %s", item)
				g.Expect(it.LastSuccess.Time).To(BeTemporally("==", end.Time), "lastSuccess of item %s", item)
				g.Expect(it.FailureCount).To(BeZero())
			}
			g.Expect(itemStatus(group, secondItem).LastPodName).To(Equal(second.Name))
			g.Expect(group.Status.CurrentRun).To(BeNil())
			expectCondition(g, group, v1alpha1.ConditionRunning, metav1.ConditionFalse, v1alpha1.ReasonIdle)
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
		}).WithContext(ctx).Should(Succeed())

		By("starting no third run: both items succeeded less than the frequency (1h) ago")
		Consistently(func(g Gomega) {
			pods, err := podsOf(ctx, "backups")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(podNames(pods)).To(ConsistOf(first.Name, second.Name))
			group := getGroup(ctx, g, "backups")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			g.Expect(group.Status.RunCount).To(Equal(int64(2)))
		}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())

		By("reporting the outcomes as events about the group")
		expectEvent(ctx, "backups", corev1.EventTypeNormal, v1alpha1.ReasonRunSucceeded)
	}, SpecTimeout(specTimeout))

	It("retries a failed item after its cool-off and keeps only its latest finished pod", func(ctx SpecContext) {
		group := newGroup("flaky", "a")
		group.Spec.FailureCoolOff = "4s"
		create(ctx, newOaatType(typeName), group)

		By("recording the failure of the first run")
		first := waitForLivePod(ctx, "flaky")
		Expect(first.Labels).To(HaveKeyWithValue(v1alpha1.LabelRun, "1"))
		markRunning(ctx, first.Name)
		failedAt := finishPod(ctx, first.Name, 3, "Error")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "flaky")
			it := itemStatus(group, "a")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.FailureCount).To(Equal(int32(1)))
			g.Expect(it.LastFailure).NotTo(BeNil())
			g.Expect(it.LastFailure.Time).To(BeTemporally("==", failedAt.Time))
			g.Expect(it.LastSuccess).To(BeNil())
			g.Expect(it.LastExitCode).To(HaveValue(Equal(int32(3))))
			g.Expect(it.LastReason).To(Equal("Error"))
			g.Expect(it.LastPodName).To(Equal(first.Name))
			g.Expect(group.Status.CurrentRun).To(BeNil())
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "flaky", corev1.EventTypeWarning, v1alpha1.ReasonRunFailed)

		By("waiting for the cool-off before the retry")
		coolOffEnds := failedAt.Add(4 * time.Second)
		expectNoLivePod(ctx, "flaky", time.Until(coolOffEnds)-300*time.Millisecond)
		second := waitForLivePodWithin(ctx, 8*time.Second, "flaky", first.Name)
		Expect(second.Name).NotTo(Equal(first.Name))
		Expect(second.Labels).To(HaveKeyWithValue(v1alpha1.LabelRun, "2"))
		Expect(second.CreationTimestamp.Time).NotTo(BeTemporally("<", coolOffEnds),
			"the retry started before the cool-off of 4s after the failure at %s", failedAt.Format(time.RFC3339))

		By("keeping the failed pod while it is the item's latest finished run")
		Expect(k8sClient.Get(ctx, keyOf(first), &corev1.Pod{})).To(Succeed())

		By("recording the success of the retry")
		markRunning(ctx, second.Name)
		succeededAt := finishPod(ctx, second.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			it := itemStatus(getGroup(ctx, g, "flaky"), "a")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.FailureCount).To(BeZero())
			g.Expect(it.LastSuccess).NotTo(BeNil())
			g.Expect(it.LastSuccess.Time).To(BeTemporally("==", succeededAt.Time))
			g.Expect(it.LastFailure).NotTo(BeNil())
			g.Expect(it.LastFailure.Time).To(BeTemporally("==", failedAt.Time))
			g.Expect(it.LastExitCode).To(HaveValue(BeZero()))
			g.Expect(it.LastPodName).To(Equal(second.Name))
		}).WithContext(ctx).Should(Succeed())

		By("deleting the failed pod, now superseded by the successful one")
		Eventually(func(g Gomega) {
			pods, err := podsOf(ctx, "flaky")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(podNames(pods)).To(ConsistOf(second.Name))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))
})

// expectItemPod checks what the operator puts on an item pod.
func expectItemPod(pod *corev1.Pod, group *v1alpha1.OaatGroup, item, run string) {
	GinkgoHelper()
	Expect(pod.Namespace).To(Equal(group.Namespace))
	Expect(pod.Labels).To(HaveKeyWithValue(v1alpha1.LabelManagedBy, v1alpha1.ManagedByValue))
	Expect(pod.Labels).To(HaveKeyWithValue(v1alpha1.LabelGroup, group.Name))
	Expect(pod.Labels).To(HaveKeyWithValue(v1alpha1.LabelItem, item))
	Expect(pod.Labels).To(HaveKeyWithValue(v1alpha1.LabelRun, run))
	Expect(pod.Labels).To(HaveKeyWithValue("app", "worker"), "the template's labels are copied")
	Expect(pod.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, item))

	owner := metav1.GetControllerOf(pod)
	Expect(owner).NotTo(BeNil(), "the pod has no controller")
	Expect(owner.APIVersion).To(Equal(v1alpha1.GroupVersion.String()))
	Expect(owner.Kind).To(Equal("OaatGroup"))
	Expect(owner.Name).To(Equal(group.Name))
	Expect(owner.UID).To(Equal(group.UID))

	Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	containers := slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers)
	Expect(containers).To(HaveLen(3))
	for _, c := range containers {
		Expect(c.Env).NotTo(BeEmpty(), "container %s has no env", c.Name)
		Expect(c.Env[0]).To(Equal(corev1.EnvVar{Name: v1alpha1.EnvItem, Value: item}), "first env of container %s", c.Name)
	}
	Expect(pod.Spec.Containers[0].Name).To(Equal(mainContainer))
	Expect(pod.Spec.Containers[0].Args).To(Equal([]string{"echo processing " + item}))
	Expect(pod.Spec.Containers[1].Env).To(ContainElement(corev1.EnvVar{Name: "FOO", Value: "bar"}))
}
