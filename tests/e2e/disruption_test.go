//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Disruptions", func() {
	It("deletes a rogue pod that carries the group's label and keeps the legitimate run", func(ctx SpecContext) {
		create(ctx, newOaatType("long", "30s", 0), newGroup("guarded", "long", "only"))
		legit := waitForRunningPod(ctx, "guarded")
		Eventually(func(g Gomega) {
			cr := getGroup(ctx, g, "guarded").Status.CurrentRun
			g.Expect(cr).NotTo(BeNil())
			g.Expect(cr.PodName).To(Equal(legit.Name))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("creating a rogue pod with the group's label")
		rogue := newRoguePod("guarded-rogue", "guarded")
		create(ctx, rogue)
		Eventually(func(g Gomega) *corev1.Pod {
			return getPod(ctx, g, rogue.Name)
		}).WithContext(ctx).WithTimeout(30*time.Second).Should(BeNil(), "the rogue pod is deleted")
		Eventually(func(g Gomega) {
			events := groupEvents(ctx, g, "guarded", v1alpha1.ReasonRoguePodDeleted)
			g.Expect(events).To(ContainElement(HaveField("Note", ContainSubstring(rogue.Name))))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("checking that the legitimate run goes on")
		Consistently(func(g Gomega) {
			pod := getPod(ctx, g, legit.Name)
			g.Expect(pod).NotTo(BeNil(), "the legitimate pod was deleted")
			g.Expect(pod.UID).To(Equal(legit.UID))
			g.Expect(pod.DeletionTimestamp).To(BeNil(), "the legitimate pod is being deleted")
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
			cr := getGroup(ctx, g, "guarded").Status.CurrentRun
			g.Expect(cr).NotTo(BeNil())
			g.Expect(cr.PodName).To(Equal(legit.Name))
			g.Expect(tracker.PodsOf(ns, "guarded")).To(HaveLen(1))
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
	}, SpecTimeout(2*time.Minute))

	It("records a run once when the operator is killed during it and restarted", Serial, func(ctx SpecContext) {
		create(ctx, newOaatType("slow", "8s", 0), newGroup("survivor", "slow", "only"))
		pod := waitForRunningPod(ctx, "survivor")

		By("killing the operator during the run")
		killOperator()
		By("restarting the operator")
		startOperator(ctx)

		By("checking that no second pod starts while the first runs")
		Eventually(func(g Gomega) {
			if recs := tracker.PodsOf(ns, "survivor"); len(recs) > 1 {
				StopTrying("a second pod was created while the first ran").Attach("pods", recs).Now()
			}
			current := getPod(ctx, g, pod.Name)
			g.Expect(current).NotTo(BeNil(), "the pod of the run disappeared")
			g.Expect(current.UID).To(Equal(pod.UID))
			g.Expect(isTerminal(current)).To(BeTrue(), "pod %s still runs", pod.Name)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("waiting for the restarted operator to record the outcome")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "survivor")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			it := itemStatus(group, "only")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastSuccess).NotTo(BeNil())
			g.Expect(it.LastPodName).To(Equal(pod.Name))
		}).WithContext(ctx).WithTimeout(60*time.Second).Should(Succeed(),
			"the restarted operator leads within the lease duration (15 s) and records the run")

		By("checking that the outcome was recorded exactly once")
		Eventually(func(g Gomega) {
			succeeded, failed := outcomeRecords(ctx, g, "survivor", pod.Name)
			g.Expect(succeeded).To(Equal(1), "RunSucceeded events for pod %s", pod.Name)
			g.Expect(failed).To(BeZero(), "RunFailed events for pod %s", pod.Name)
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			succeeded, failed := outcomeRecords(ctx, g, "survivor", pod.Name)
			g.Expect(succeeded).To(Equal(1), "RunSucceeded events for pod %s", pod.Name)
			g.Expect(failed).To(BeZero(), "RunFailed events for pod %s", pod.Name)
			group := getGroup(ctx, g, "survivor")
			it := itemStatus(group, "only")
			g.Expect(it.FailureCount).To(BeZero())
			g.Expect(it.LastFailure).To(BeNil())
			g.Expect(it.LastReason).To(Equal("Completed"))
			g.Expect(group.Status.RunCount).To(BeEquivalentTo(1))
			g.Expect(tracker.PodsOf(ns, "survivor")).To(HaveLen(1))
		}).WithContext(ctx).WithTimeout(4 * time.Second).Should(Succeed())
	}, SpecTimeout(3*time.Minute))

	It("records a running pod deleted by a user as one failure and moves on to the next item", func(ctx SpecContext) {
		create(ctx, newOaatType("long", "30s", 0), newGroup("interrupted", "long", "first", "second"))
		pod := waitForRunningPod(ctx, "interrupted")
		deletedItem := pod.Annotations[v1alpha1.AnnotationItem]
		nextItem := map[string]string{"first": "second", "second": "first"}[deletedItem]
		Expect(nextItem).NotTo(BeEmpty(), "item of pod %s: %q", pod.Name, deletedItem)

		By("deleting the running pod " + pod.Name + " (item " + deletedItem + ") as a user would")
		Expect(clientset.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{})).To(Succeed())

		By("waiting for the failure to be recorded and the next item to start")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "interrupted")
			it := itemStatus(group, deletedItem)
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.FailureCount).To(BeEquivalentTo(1))
			g.Expect(it.LastFailure).NotTo(BeNil())
			g.Expect(it.LastSuccess).To(BeNil())
			g.Expect(it.LastPodName).To(Equal(pod.Name))
			// The finalizer oaat.io/run-tracking keeps the pod until its last state is read: the
			// exit code its kubelet (here kwok's stage pod-terminate) gave it when it stopped it.
			g.Expect(it.LastExitCode).To(HaveValue(BeEquivalentTo(137)))
			g.Expect(it.LastReason).To(Equal("Error"))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		next := waitForRunningPod(ctx, "interrupted", pod.Name)
		Expect(next.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, nextItem),
			"the item that never failed goes before the one that just failed")

		By("checking that the failure was recorded exactly once")
		Eventually(func(g Gomega) {
			succeeded, failed := outcomeRecords(ctx, g, "interrupted", pod.Name)
			g.Expect(failed).To(Equal(1), "RunFailed events for pod %s", pod.Name)
			g.Expect(succeeded).To(BeZero(), "RunSucceeded events for pod %s", pod.Name)
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			succeeded, failed := outcomeRecords(ctx, g, "interrupted", pod.Name)
			g.Expect(failed).To(Equal(1), "RunFailed events for pod %s", pod.Name)
			g.Expect(succeeded).To(BeZero(), "RunSucceeded events for pod %s", pod.Name)
			group := getGroup(ctx, g, "interrupted")
			g.Expect(itemStatus(group, deletedItem).FailureCount).To(BeEquivalentTo(1))
			g.Expect(group.Status.CurrentRun).NotTo(BeNil())
			g.Expect(group.Status.CurrentRun.PodName).To(Equal(next.Name))
			g.Expect(itemsOf(tracker.PodsOf(ns, "interrupted"))).To(Equal([]string{deletedItem, nextItem}))
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
	}, SpecTimeout(2*time.Minute))

	// The Eviction API (kubectl drain's) marks the pod with the condition DisruptionTarget before
	// it goes: the run is Disrupted, not a failure, and the item runs again at once.
	It("records a running pod evicted through the Eviction API as Disrupted, no failure and no cool-off, and runs the item again", Label("floor"), func(ctx SpecContext) {
		group := newGroup("evicted", "long", "only")
		group.Spec.FailureCoolOff = "1h"
		create(ctx, newOaatType("long", "30s", 0), group)
		pod := waitForRunningPod(ctx, "evicted")

		By("evicting the running pod " + pod.Name + " as kubectl drain does")
		Expect(clientset.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns},
		})).To(Succeed())

		By("waiting for the run to be recorded as Disrupted and the item to start again")
		Eventually(func(g Gomega) {
			it := itemStatus(getGroup(ctx, g, "evicted"), "only")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastPodName).To(Equal(pod.Name))
			g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonDisrupted)))
			g.Expect(it.FailureCount).To(BeZero())
			g.Expect(it.LastFailure).To(BeNil())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		next := waitForRunningPod(ctx, "evicted", pod.Name)
		Expect(next.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, "only"), "the item runs again, no cool-off")
		Expect(itemsOf(tracker.PodsOf(ns, "evicted"))).To(Equal([]string{"only", "only"}))
	}, SpecTimeout(2*time.Minute))

	// A group deleted with --cascade=orphan leaves its pods, without owner reference, and a group
	// created again with the same name, once the history its predecessor left is deleted (an
	// OaatGroupHistory, which it would adopt, runs and their numbers included), numbers its runs
	// from 1 again: the pod names of its first runs are those of the orphans.
	It("runs an item of a group created again after it was deleted with its pods orphaned", func(ctx SpecContext) {
		create(ctx, newOaatType("quick", "2s", 0), newGroup("again", "quick", "only"))
		var orphan string
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "again")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			it := itemStatus(group, "only")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastSuccess).NotTo(BeNil())
			orphan = it.LastPodName
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("deleting the group and orphaning its pod " + orphan)
		deleteGroup(ctx, "again", client.PropagationPolicy(metav1.DeletePropagationOrphan))
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "again"}, &v1alpha1.OaatGroup{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the group still exists: %v", err)
			pod := getPod(ctx, g, orphan)
			g.Expect(pod).NotTo(BeNil())
			g.Expect(pod.OwnerReferences).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(90 * time.Second).Should(Succeed())

		By("deleting the history the group left, so that the group created again starts afresh")
		Expect(k8sClient.Delete(ctx, &v1alpha1.OaatGroupHistory{ObjectMeta: metav1.ObjectMeta{Name: "again", Namespace: ns}})).To(Succeed())

		By("creating the group again, with a failure cool-off of 1h")
		group := newGroup("again", "quick", "only")
		group.Spec.FailureCoolOff = "1h"
		create(ctx, group)
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "again")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			it := itemStatus(group, "only")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastFailure).To(BeNil(), "a run of the new group failed (%s): its pod was taken to be the orphan %s",
				it.LastReason, orphan)
			g.Expect(it.LastSuccess).NotTo(BeNil())
			pod := getPod(ctx, g, it.LastPodName)
			g.Expect(pod).NotTo(BeNil())
			g.Expect(metav1.IsControlledBy(pod, group)).To(BeTrue(), "pod %s is the new group's", pod.Name)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	}, SpecTimeout(3*time.Minute))

	It("lets the garbage collector delete the running pod of a deleted group", func(ctx SpecContext) {
		group := newGroup("doomed", "forever", "only")
		create(ctx, newOaatType("forever", "60s", 0), group)
		pod := waitForRunningPod(ctx, "doomed")

		By("deleting the group while " + pod.Name + " runs")
		Expect(k8sClient.Delete(ctx, group)).To(Succeed())
		Eventually(func(g Gomega) []string {
			return podNames(podsOf(ctx, g, "doomed"))
		}).WithContext(ctx).WithTimeout(90*time.Second).Should(BeEmpty(),
			"the garbage collector deletes the pods owned by the deleted group")
		Consistently(func(g Gomega) {
			g.Expect(podNames(podsOf(ctx, g, "doomed"))).To(BeEmpty())
			g.Expect(tracker.PodsOf(ns, "doomed")).To(HaveLen(1), "no pod started after the group was deleted")
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
	}, SpecTimeout(3*time.Minute))
})
