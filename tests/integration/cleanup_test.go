package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Pods that are not the group's current run", func() {
	It("deletes a rogue pod that carries the group's label and leaves the current run alone", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), newGroup("guarded", "a"))
		legit := waitForLivePod(ctx, "guarded")
		markRunning(ctx, legit.Name)

		By("creating a pod with the group's label and no owner")
		rogue := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: "intruder", Namespace: ns,
				Labels: map[string]string{v1alpha1.LabelGroup: "guarded", labelTestPod: "rogue"},
			},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers:                    []corev1.Container{{Name: "intruder", Image: "busybox"}},
			},
		}
		create(ctx, rogue)

		By("deleting it")
		Eventually(func(g Gomega) {
			pod := &corev1.Pod{}
			err := k8sClient.Get(ctx, keyOf(rogue), pod)
			if err == nil {
				g.Expect(pod.DeletionTimestamp).NotTo(BeNil(), "the rogue pod is not being deleted")
				return
			}
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "reading the rogue pod: %v", err)
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "guarded", corev1.EventTypeWarning, v1alpha1.ReasonRoguePodDeleted)

		By("leaving the current run's pod alone")
		Consistently(func(g Gomega) {
			pod := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, keyOf(legit), pod)).To(Succeed())
			g.Expect(pod.UID).To(Equal(legit.UID))
			g.Expect(pod.DeletionTimestamp).To(BeNil())
			group := getGroup(ctx, g, "guarded")
			g.Expect(group.Status.CurrentRun).NotTo(BeNil())
			g.Expect(group.Status.CurrentRun.PodName).To(Equal(legit.Name))
		}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("counts a pod deleted while it runs as one failure and moves on to the next item", func(ctx SpecContext) {
		items := [2]string{"a", "b"}
		create(ctx, newOaatType(typeName), newGroup("interrupted", items[:]...))
		first := waitForLivePod(ctx, "interrupted")
		item := first.Annotations[v1alpha1.AnnotationItem]
		markRunning(ctx, first.Name)
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "interrupted").Status.CurrentRun).To(HaveField("PodName", first.Name))
		}).WithContext(ctx).Should(Succeed())

		By("deleting the running pod")
		Expect(k8sClient.Delete(ctx, first, client.GracePeriodSeconds(0))).To(Succeed())

		By("recording one failure without exit code")
		expectDeletedRun := func(g Gomega) {
			group := getGroup(ctx, g, "interrupted")
			it := itemStatus(group, item)
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.FailureCount).To(Equal(int32(1)))
			g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonPodNotFound)))
			g.Expect(it.LastExitCode).To(BeNil())
			g.Expect(it.LastFailure).NotTo(BeNil())
			g.Expect(it.LastSuccess).To(BeNil())
			g.Expect(it.LastPodName).To(Equal(first.Name))
			g.Expect(occurrences(groupEvents(ctx, g, "interrupted", v1alpha1.ReasonRunFailed))).To(Equal(1))
		}
		Eventually(expectDeletedRun).WithContext(ctx).Should(Succeed())

		By("starting the other item")
		second := waitForLivePod(ctx, "interrupted", first.Name)
		Expect(second.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, otherItem(items, item)))
		Consistently(expectDeletedRun).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("drops the status entry of an item removed from the group once it has no live pod", func(ctx SpecContext) {
		items := [2]string{"a", "b"}
		create(ctx, newOaatType(typeName), newGroup("shrinking", items[:]...))
		first := waitForLivePod(ctx, "shrinking")
		done := first.Annotations[v1alpha1.AnnotationItem]
		running := otherItem(items, done)
		finishPod(ctx, first.Name, 0, "Completed")
		second := waitForLivePod(ctx, "shrinking", first.Name)
		Expect(second.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, running))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "shrinking")
			g.Expect(itemNames(group)).To(ConsistOf(done, running))
			g.Expect(itemStatus(group, done).LastSuccess).NotTo(BeNil())
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", second.Name))
		}).WithContext(ctx).Should(Succeed())

		By("removing the item that is not running: its entry goes at once")
		updateGroupSpec(ctx, "shrinking", func(spec *v1alpha1.OaatGroupSpec) { spec.OaatItems = []string{running} })
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "shrinking")
			g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation))
			g.Expect(itemNames(group)).To(ConsistOf(running))
			g.Expect(group.Status.ItemCount).To(Equal(int32(1)))
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", second.Name))
		}).WithContext(ctx).Should(Succeed())

		By("replacing the running item: its entry stays while its pod is live")
		updateGroupSpec(ctx, "shrinking", func(spec *v1alpha1.OaatGroupSpec) { spec.OaatItems = []string{"c"} })
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "shrinking")
			g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation))
			g.Expect(itemNames(group)).To(ConsistOf(running, "c"))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			group := getGroup(ctx, g, "shrinking")
			g.Expect(itemNames(group)).To(ConsistOf(running, "c"))
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", second.Name))
		}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())

		By("ending its pod: its entry goes, and the new item starts")
		finishPod(ctx, second.Name, 0, "Completed")
		third := waitForLivePod(ctx, "shrinking", first.Name, second.Name)
		Expect(third.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, "c"))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "shrinking")
			g.Expect(itemNames(group)).To(ConsistOf("c"))
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", third.Name))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("waits for a pod that is being deleted to end before starting the next item", func(ctx SpecContext) {
		items := [2]string{"a", "b"}
		create(ctx, newOaatType(typeName), newGroup("draining", items[:]...))
		first := waitForLivePod(ctx, "draining")
		item := first.Annotations[v1alpha1.AnnotationItem]

		By("binding the pod to a node, so that its deletion waits for the kubelet")
		Expect(clientset.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: first.Name, Namespace: ns},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		}, metav1.CreateOptions{})).To(Succeed())
		markRunning(ctx, first.Name)
		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		Eventually(func(g Gomega) {
			pod := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, keyOf(first), pod)).To(Succeed())
			g.Expect(pod.DeletionTimestamp).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())

		By("starting nothing while it still runs")
		Consistently(func(g Gomega) {
			pods, err := podsOf(ctx, "draining")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(podNames(pods)).To(ConsistOf(first.Name))
			group := getGroup(ctx, g, "draining")
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", first.Name))
			g.Expect(itemStatus(group, item).FailureCount).To(BeZero())
		}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())

		By("recording the run once it ends, and once only when its pod goes")
		failedAt := finishPod(ctx, first.Name, 137, "Error")
		second := waitForLivePod(ctx, "draining", first.Name)
		Expect(second.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, otherItem(items, item)))
		Expect(k8sClient.Delete(ctx, first, client.GracePeriodSeconds(0))).To(Succeed())
		recordedOnce := func(g Gomega) {
			group := getGroup(ctx, g, "draining")
			it := itemStatus(group, item)
			g.Expect(it.FailureCount).To(Equal(int32(1)))
			g.Expect(it.LastFailure).NotTo(BeNil())
			g.Expect(it.LastFailure.Time).To(BeTemporally("==", failedAt.Time))
			g.Expect(it.LastExitCode).To(HaveValue(Equal(int32(137))))
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", second.Name))
			g.Expect(occurrences(groupEvents(ctx, g, "draining", v1alpha1.ReasonRunFailed))).To(Equal(1))
		}
		Eventually(recordedOnce).WithContext(ctx).Should(Succeed())
		Consistently(recordedOnce).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())
	}, SpecTimeout(specTimeout))
})
