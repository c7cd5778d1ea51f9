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

var _ = Describe("History", func() {
	// What a GitOps tool replacing the object does (delete, then apply the same manifest), or a
	// restore of the group without its status.
	It("keeps a group deleted and applied again from running its items before they are due", func(ctx SpecContext) {
		items := []string{"a", "b", "c"}
		create(ctx, newOaatType("quick", "2s", 0), newGroup("replaced", "quick", items...))
		successes := map[string]metav1.Time{}
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "replaced")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			g.Expect(group.Finalizers).To(ContainElement(v1alpha1.FinalizerHistory))
			for _, item := range items {
				it := itemOf(g, group, item)
				g.Expect(it.LastSuccess).NotTo(BeNil(), "item %s", item)
				successes[item] = *it.LastSuccess
			}
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		ran := len(tracker.PodsOf(ns, "replaced"))

		By("deleting the group: its history is kept, its pods are collected")
		deleteGroup(ctx, "replaced")
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "replaced"}, &v1alpha1.OaatGroup{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the group still exists: %v", err)
			record := &v1alpha1.OaatGroupHistory{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "replaced"}, record)).To(Succeed())
			g.Expect(record.Spec.Items).To(HaveLen(len(items)))
			g.Expect(podNames(podsOf(ctx, g, "replaced"))).To(BeEmpty(), "the garbage collector deletes the old group's pods")
		}).WithContext(ctx).WithTimeout(90 * time.Second).Should(Succeed())

		By("applying the same group again")
		create(ctx, newGroup("replaced", "quick", items...))
		Consistently(func(g Gomega) {
			g.Expect(tracker.PodsOf(ns, "replaced")).To(HaveLen(ran), "a pod started though every item succeeded within its frequency")
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "replaced")
			for _, item := range items {
				it := itemOf(g, group, item)
				g.Expect(it.LastSuccess).To(HaveValue(Equal(successes[item])), "item %s", item)
				g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitSucceededRecently), "item %s", item)
			}
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "replaced"}, &v1alpha1.OaatGroupHistory{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the adopted record is deleted: %v", err)
			g.Expect(groupEvents(ctx, g, "replaced", v1alpha1.ReasonHistoryAdopted)).NotTo(BeEmpty())
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}, SpecTimeout(3*time.Minute))

	// A user renames the path an item names (/srv/photo to /srv/photos) and says so in
	// spec.itemRenames: the new name takes the old one's history instead of running as new.
	It("keeps a renamed item from running again before it is due", func(ctx SpecContext) {
		create(ctx, newOaatType("quick", "2s", 0), newGroup("photos", "quick", "/srv/photo", "/srv/music"))
		var success metav1.Time
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "photos")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			g.Expect(itemOf(g, group, "/srv/music").LastSuccess).NotTo(BeNil())
			photo := itemOf(g, group, "/srv/photo")
			g.Expect(photo.LastSuccess).NotTo(BeNil())
			success = *photo.LastSuccess
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		ran := len(tracker.PodsOf(ns, "photos"))

		By("renaming /srv/photo to /srv/photos in oaatItems and itemRenames")
		updateGroup(ctx, "photos", func(group *v1alpha1.OaatGroup) {
			group.Spec.OaatItems = []string{"/srv/photos", "/srv/music"}
			group.Spec.ItemRenames = []v1alpha1.ItemRename{{From: "/srv/photo", To: "/srv/photos"}}
		})
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "photos")
			g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation))
			g.Expect(itemNames(group)).To(ConsistOf("/srv/photos", "/srv/music"), "the old name's entry is gone")
			photos := itemOf(g, group, "/srv/photos")
			g.Expect(photos.LastSuccess).To(HaveValue(Equal(success)))
			g.Expect(photos.WaitReason).To(Equal(v1alpha1.WaitSucceededRecently))
			g.Expect(groupEvents(ctx, g, "photos", v1alpha1.ReasonItemRenamed)).NotTo(BeEmpty())
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(tracker.PodsOf(ns, "photos")).To(HaveLen(ran), "a pod started though the renamed item succeeded within its frequency")
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
	}, SpecTimeout(2*time.Minute))
})
