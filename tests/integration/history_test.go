package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
)

var _ = Describe("The history of a group's items", func() {
	It("survives the group's deletion: the group re-created with the same items runs none before it is due", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), coolingGroup("backups", "a", "b"))
		ends := map[string]metav1.Time{}
		firstItem, end := runOnePod(ctx, "backups", 0)
		ends[firstItem] = end
		secondItem, end := runOnePod(ctx, "backups", 1)
		ends[secondItem] = end
		old := waitForHistoryOf(ctx, "backups", firstItem, secondItem)
		Expect(old.Finalizers).To(ContainElement(v1alpha1.FinalizerHistory))

		deleteGroup(ctx, old)
		record := getRecord(ctx, Default, ns, "backups")
		Expect(record.Spec.GroupUID).To(BeEquivalentTo(old.UID))
		Expect(record.Spec.OaatType).To(Equal(typeName))
		Expect(record.Spec.RunCount).To(Equal(int64(2)))
		Expect(record.Spec.ExpiresAt.Sub(record.Spec.DeletedAt.Time)).To(Equal(history.DefaultRetention))
		Expect(record.Spec.Items).To(HaveLen(2))

		By("creating the group again, with the same spec")
		create(ctx, coolingGroup("backups", "a", "b"))
		expectNoLivePod(ctx, "backups", 3*time.Second)
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "backups")
			g.Expect(group.UID).NotTo(Equal(old.UID))
			g.Expect(group.Finalizers).To(ContainElement(v1alpha1.FinalizerHistory))
			g.Expect(group.Status.RunCount).To(Equal(int64(2)), "the runs are numbered on from the deleted group's")
			g.Expect(itemNames(group)).To(ConsistOf("a", "b"))
			ok := itemStatus(group, firstItem)
			g.Expect(ok.LastSuccess).To(HaveValue(Equal(ends[firstItem])))
			g.Expect(ok.WaitReason).To(Equal(v1alpha1.WaitSucceededRecently))
			bad := itemStatus(group, secondItem)
			g.Expect(bad.LastFailure).To(HaveValue(Equal(ends[secondItem])))
			g.Expect(bad.FailureCount).To(Equal(int32(1)))
			g.Expect(bad.WaitReason).To(Equal(v1alpha1.WaitCoolingOff))
			expectNoRecord(ctx, g, ns, "backups")
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "backups", corev1.EventTypeNormal, v1alpha1.ReasonHistoryAdopted)
	}, SpecTimeout(specTimeout))

	It("gives a group re-created with other items the history of the items it still has, and no other", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), coolingGroup("backups", "a", "b"))
		_, _ = runOnePod(ctx, "backups", 0)
		_, _ = runOnePod(ctx, "backups", 0)
		old := waitForHistoryOf(ctx, "backups", "a", "b")
		bEnd := itemStatus(old, "b").LastSuccess
		deleteGroup(ctx, old)
		getRecord(ctx, Default, ns, "backups")

		By("creating the group again without a, with a new item c")
		create(ctx, coolingGroup("backups", "b", "c"))
		pod := waitForLivePod(ctx, "backups")
		Expect(pod.Annotations[v1alpha1.AnnotationItem]).To(Equal("c"), "the only item without history")
		Expect(pod.Labels[v1alpha1.LabelRun]).To(Equal("3"))
		markRunning(ctx, pod.Name)
		finishPod(ctx, pod.Name, 0, "Completed")
		expectNoLivePod(ctx, "backups", 2*time.Second)
		group := waitForHistoryOf(ctx, "backups", "b", "c")
		Expect(itemNames(group)).To(ConsistOf("b", "c"), "a, removed meanwhile, is not resurrected")
		Expect(itemStatus(group, "b").LastSuccess).To(Equal(bEnd))
	}, SpecTimeout(specTimeout))

	It("adopts nothing when the group is re-created with another OaatType", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), newOaatType("verifier"), coolingGroup("backups", "a"))
		_, _ = runOnePod(ctx, "backups", 0)
		deleteGroup(ctx, waitForHistoryOf(ctx, "backups", "a"))
		getRecord(ctx, Default, ns, "backups")

		group := coolingGroup("backups", "a")
		group.Spec.OaatType = "verifier"
		create(ctx, group)
		// a succeeded under the other type a moment ago: it runs at once all the same.
		Expect(waitForLivePod(ctx, "backups").Annotations[v1alpha1.AnnotationItem]).To(Equal("a"))
		Eventually(func(g Gomega) { expectNoRecord(ctx, g, ns, "backups") }).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "backups", corev1.EventTypeNormal, v1alpha1.ReasonHistoryDiscarded)
	}, SpecTimeout(specTimeout))

	It("keeps the history of a renamed item, in the group and across its re-creation", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), coolingGroup("photos", "/srv/photo"))
		_, end := runOnePod(ctx, "photos", 0)
		waitForHistoryOf(ctx, "photos", "/srv/photo")

		By("renaming /srv/photo to /srv/photos")
		updateGroupSpec(ctx, "photos", func(spec *v1alpha1.OaatGroupSpec) {
			spec.OaatItems = []string{"/srv/photos"}
			spec.ItemRenames = []v1alpha1.ItemRename{{From: "/srv/photo", To: "/srv/photos"}}
		})
		expectNoLivePod(ctx, "photos", 3*time.Second)
		var renamed *v1alpha1.OaatGroup
		Eventually(func(g Gomega) {
			renamed = getGroup(ctx, g, "photos")
			g.Expect(renamed.Status.ObservedGeneration).To(Equal(renamed.Generation))
			g.Expect(itemNames(renamed)).To(Equal([]string{"/srv/photos"}))
			g.Expect(itemStatus(renamed, "/srv/photos").LastSuccess).To(HaveValue(Equal(end)))
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "photos", corev1.EventTypeNormal, v1alpha1.ReasonItemRenamed)

		By("deleting the group, then creating it again with /srv/photos renamed to /srv/pictures")
		deleteGroup(ctx, renamed)
		getRecord(ctx, Default, ns, "photos")
		group := coolingGroup("photos", "/srv/pictures")
		group.Spec.ItemRenames = []v1alpha1.ItemRename{{From: "/srv/photos", To: "/srv/pictures"}}
		create(ctx, group)
		expectNoLivePod(ctx, "photos", 3*time.Second)
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "photos")
			g.Expect(itemNames(group)).To(Equal([]string{"/srv/pictures"}))
			g.Expect(itemStatus(group, "/srv/pictures").LastSuccess).To(HaveValue(Equal(end)))
			expectNoRecord(ctx, g, ns, "photos")
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("is deleted at its expiry and not adopted after it", func(ctx SpecContext) {
		stopManager()
		stopManager = startManagerWith(managerOptions{historyRetention: 4 * time.Second})
		create(ctx, newOaatType(typeName), coolingGroup("backups", "a"))
		_, _ = runOnePod(ctx, "backups", 0)
		deleteGroup(ctx, waitForHistoryOf(ctx, "backups", "a"))
		record := getRecord(ctx, Default, ns, "backups")
		Expect(record.Spec.ExpiresAt.Sub(record.Spec.DeletedAt.Time)).To(Equal(4 * time.Second))

		By("deleting the record at its expiry")
		Eventually(func(g Gomega) { expectNoRecord(ctx, g, ns, "backups") }).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		Expect(time.Now()).To(BeTemporally(">=", record.Spec.ExpiresAt.Time))

		By("running the item of the group created again: nothing is left to adopt")
		create(ctx, coolingGroup("backups", "a"))
		Expect(waitForLivePod(ctx, "backups").Annotations[v1alpha1.AnnotationItem]).To(Equal("a"))

		By("adopting nothing of a record found expired, and deleting it")
		past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
		create(ctx, &v1alpha1.OaatGroupHistory{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"},
			Spec: v1alpha1.OaatGroupHistorySpec{GroupUID: "gone", OaatType: typeName, RunCount: 9,
				DeletedAt: metav1.NewTime(past.Add(-time.Hour)), ExpiresAt: past,
				Items: []v1alpha1.ItemHistory{{Name: "a", LastStarted: &past, LastSuccess: &past}}},
		})
		create(ctx, coolingGroup("late", "a"))
		Expect(waitForLivePod(ctx, "late").Labels[v1alpha1.LabelRun]).To(Equal("1"), "the record's run count is not adopted either")
		Eventually(func(g Gomega) { expectNoRecord(ctx, g, ns, "late") }).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("of another namespace never reaches a group", func(ctx SpecContext) {
		other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "oaat-it-other-"}}
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroupHistory{}, client.InNamespace(other.Name))).To(Succeed())
		})
		recent := metav1.NewTime(time.Now().Truncate(time.Second))
		foreign := &v1alpha1.OaatGroupHistory{
			ObjectMeta: metav1.ObjectMeta{Namespace: other.Name, Name: "backups"},
			Spec: v1alpha1.OaatGroupHistorySpec{GroupUID: "elsewhere", OaatType: typeName, RunCount: 9,
				DeletedAt: recent, ExpiresAt: metav1.NewTime(recent.Add(time.Hour)),
				Items: []v1alpha1.ItemHistory{{Name: "a", LastStarted: &recent, LastSuccess: &recent}}},
		}
		create(ctx, foreign)

		create(ctx, newOaatType(typeName), coolingGroup("backups", "a"))
		Expect(waitForLivePod(ctx, "backups").Labels[v1alpha1.LabelRun]).To(Equal("1"),
			"the group of the same name in namespace %s ran its item, as a new group", ns)
		kept := getRecord(ctx, Default, other.Name, "backups")
		Expect(kept.ResourceVersion).To(Equal(foreign.ResourceVersion), "the other namespace's record is untouched")
	}, SpecTimeout(specTimeout))

	It("is written when the group is deleted while its item runs, whose pod stays the old group's", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), coolingGroup("backups", "a"))
		pod := waitForLivePod(ctx, "backups")
		markRunning(ctx, pod.Name)
		var old *v1alpha1.OaatGroup
		Eventually(func(g Gomega) {
			old = getGroup(ctx, g, "backups")
			g.Expect(old.Finalizers).To(ContainElement(v1alpha1.FinalizerHistory))
			g.Expect(old.Status.CurrentRun).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())

		deleteGroup(ctx, old)
		record := getRecord(ctx, Default, ns, "backups")
		Expect(record.Spec.Items).To(HaveLen(1))
		Expect(record.Spec.Items[0].LastStarted).NotTo(BeNil())
		Expect(record.Spec.Items[0].LastSuccess).To(BeNil())
		// No garbage collector runs here; in a cluster it deletes the pod, whose owner is gone
		// (the end-to-end suite shows it).
		live := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod.Name}, live)).To(Succeed())
		Expect(metav1.IsControlledBy(live, old)).To(BeTrue())
		Expect(live.DeletionTimestamp).To(BeNil(), "the operator leaves the pod to the garbage collector")
	}, SpecTimeout(specTimeout))
})

// coolingGroup is newGroup with a failure cool-off of 1h: no item runs again within the test.
func coolingGroup(name string, items ...string) *v1alpha1.OaatGroup {
	group := newGroup(name, items...)
	group.Spec.FailureCoolOff = "1h"
	return group
}

// runOnePod waits for the group's next live pod, runs it and ends it with exitCode; it returns
// the pod's item and its end.
func runOnePod(ctx context.Context, group string, exitCode int32) (string, metav1.Time) {
	GinkgoHelper()
	pod := waitForLivePod(ctx, group)
	markRunning(ctx, pod.Name)
	reason := "Completed"
	if exitCode != 0 {
		reason = "Error"
	}
	end := finishPod(ctx, pod.Name, exitCode, reason)
	Eventually(func(g Gomega) {
		it := itemStatus(getGroup(ctx, g, group), pod.Annotations[v1alpha1.AnnotationItem])
		g.Expect(it).NotTo(BeNil())
		g.Expect(it.LastPodName).To(Equal(pod.Name), "the run of pod %s recorded", pod.Name)
	}).WithContext(ctx).Should(Succeed())
	return pod.Annotations[v1alpha1.AnnotationItem], end
}

// waitForHistoryOf waits until each of the items has ended a run and no item runs, and returns
// the group.
func waitForHistoryOf(ctx context.Context, name string, items ...string) *v1alpha1.OaatGroup {
	GinkgoHelper()
	var group *v1alpha1.OaatGroup
	Eventually(func(g Gomega) {
		group = getGroup(ctx, g, name)
		g.Expect(group.Status.CurrentRun).To(BeNil())
		for _, item := range items {
			it := itemStatus(group, item)
			g.Expect(it).NotTo(BeNil(), "item %s", item)
			g.Expect(it.LastSuccess != nil || it.LastFailure != nil).To(BeTrue(), "item %s has ended a run", item)
		}
	}).WithContext(ctx).Should(Succeed())
	return group
}

// deleteGroup deletes the group and waits until it is gone: the operator has removed its
// finalizer.
func deleteGroup(ctx context.Context, group *v1alpha1.OaatGroup) {
	GinkgoHelper()
	Expect(k8sClient.Delete(ctx, group)).To(Succeed())
	Eventually(func(g Gomega) {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(group), &v1alpha1.OaatGroup{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "group %s still exists: %v", group.Name, err)
	}).WithContext(ctx).Should(Succeed())
}

// getRecord reads the OaatGroupHistory of the namespace and name.
func getRecord(ctx context.Context, g Gomega, namespace, name string) *v1alpha1.OaatGroupHistory {
	record := &v1alpha1.OaatGroupHistory{}
	g.ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, record)).To(Succeed())
	return record
}

// expectNoRecord checks that the namespace has no OaatGroupHistory of the name.
func expectNoRecord(ctx context.Context, g Gomega, namespace, name string) {
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &v1alpha1.OaatGroupHistory{})
	g.ExpectWithOffset(1, apierrors.IsNotFound(err)).To(BeTrue(), "OaatGroupHistory %s/%s: %v", namespace, name, err)
}

// dropHistoryFinalizers removes the finalizer oaat.io/history from the groups of the test's
// namespace, as docs/history.md tells a user to when the operator is gone.
func dropHistoryFinalizers(ctx context.Context) {
	groups := &v1alpha1.OaatGroupList{}
	Expect(k8sClient.List(ctx, groups, client.InNamespace(ns))).To(Succeed())
	for i := range groups.Items {
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			group := &v1alpha1.OaatGroup{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(&groups.Items[i]), group); err != nil {
				return client.IgnoreNotFound(err)
			}
			if !controllerutil.RemoveFinalizer(group, v1alpha1.FinalizerHistory) {
				return nil
			}
			return client.IgnoreNotFound(k8sClient.Update(ctx, group))
		})).To(Succeed())
	}
}
