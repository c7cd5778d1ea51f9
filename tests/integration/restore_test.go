package integration

import (
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("A group restored without its status", func() {
	It("takes its items' history from kubectl oaat history import, and runs none before it is due", func(ctx SpecContext) {
		dir := GinkgoT().TempDir() // where the pages' commands write GROUP-history.yaml
		values := map[string]string{"GROUP": "restored", "NAMESPACE": ns}
		create(ctx, newOaatType(typeName), coolingGroup("restored", "a", "b", "c"))
		ends := map[string]metav1.Time{}
		for range 3 {
			item, end := runOnePod(ctx, "restored", 0)
			ends[item] = end
		}
		old := waitForHistoryOf(ctx, "restored", "a", "b", "c")

		By("exporting its history, as a backup would: the command of docs/history.md")
		runDocBlocks(ctx, dir, "history-export", values)
		Expect(filepath.Join(dir, "restored-history.yaml")).To(BeAnExistingFile())

		// hasItsHistory checks that the group holds the exported history and, unless it is
		// suspended, that no item is due.
		hasItsHistory := func(g Gomega) {
			group := getGroup(ctx, g, "restored")
			g.Expect(group.UID).NotTo(Equal(old.UID))
			g.Expect(group.Finalizers).To(ContainElement(v1alpha1.FinalizerHistory))
			g.Expect(group.Status.RunCount).To(Equal(int64(3)))
			for item, end := range ends {
				it := itemStatus(group, item)
				g.Expect(it).NotTo(BeNil(), "item %s", item)
				g.Expect(it.LastSuccess).To(HaveValue(Equal(end)), "item %s", item)
				if !group.Spec.Suspend {
					g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitSucceededRecently), "item %s", item)
				}
			}
			expectNoRecord(ctx, g, ns, "restored")
		}
		// lost deletes the group and the record the operator kept, as a restore to a new cluster
		// finds neither.
		lost := func() {
			deleteGroup(ctx, getGroup(ctx, Default, "restored"))
			Expect(k8sClient.Delete(ctx, &v1alpha1.OaatGroupHistory{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restored"}})).To(Succeed())
		}

		By("losing the group, importing its history, then restoring the group without its status")
		lost()
		runDocBlocks(ctx, dir, "history-import", values)
		create(ctx, coolingGroup("restored", "a", "b", "c"))
		expectNoLivePod(ctx, "restored", 3*time.Second)
		Eventually(hasItsHistory).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "restored", corev1.EventTypeNormal, v1alpha1.ReasonHistoryAdopted)

		By("losing it again, restoring the group suspended first, then importing its history")
		lost()
		suspended := coolingGroup("restored", "a", "b", "c")
		suspended.Spec.Suspend = true
		create(ctx, suspended)
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "restored").Finalizers).To(ContainElement(v1alpha1.FinalizerHistory), "its first pass is over")
		}).WithContext(ctx).Should(Succeed())
		runDocBlocks(ctx, dir, "history-import", values)
		Eventually(hasItsHistory).WithContext(ctx).Should(Succeed())
		updateGroupSpec(ctx, "restored", func(spec *v1alpha1.OaatGroupSpec) { spec.Suspend = false })
		expectNoLivePod(ctx, "restored", 3*time.Second)
		Eventually(hasItsHistory).WithContext(ctx).Should(Succeed())
		Consistently(hasItsHistory).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())
	}, SpecTimeout(specTimeout))
})
