package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// otherToolFinalizer stands for the finalizer another tool (a GitOps tool, a backup tool) puts
// on a group.
const otherToolFinalizer = "example.com/other-tool"

var _ = Describe("The finalizer oaat.io/history when the operator is gone", func() {
	It("is removed alone by the command of docs/history.md, another tool's finalizer kept", func(ctx SpecContext) {
		group := newGroup("orphaned", "a")
		group.Spec.Suspend = true
		create(ctx, newOaatType(typeName), group)
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "orphaned").Finalizers).To(ContainElement(v1alpha1.FinalizerHistory), "its first pass is over")
		}).WithContext(ctx).Should(Succeed())

		By("uninstalling the operator; another tool's finalizer comes first, then the group is deleted")
		stopManager()
		DeferCleanup(func() { stopManager = startManager() })
		setGroupFinalizers(ctx, "orphaned", otherToolFinalizer, v1alpha1.FinalizerHistory)
		DeferCleanup(func(ctx SpecContext) { setGroupFinalizers(ctx, "orphaned") })
		Expect(k8sClient.Delete(ctx, newGroup("orphaned"))).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "orphaned").Finalizers).To(Equal([]string{otherToolFinalizer, v1alpha1.FinalizerHistory}))
		}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed(), "the finalizers keep the group")

		By("running the documented command")
		runDocBlocks(ctx, GinkgoT().TempDir(), "stuck-history", nil)
		group = getGroup(ctx, Default, "orphaned")
		Expect(group.DeletionTimestamp).NotTo(BeNil())
		Expect(group.Finalizers).To(Equal([]string{otherToolFinalizer}), "the other tool's finalizer stays, alone")

		By("the other tool removing its own: the group goes")
		setGroupFinalizers(ctx, "orphaned")
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orphaned"}, &v1alpha1.OaatGroup{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the group is gone: %v", err)
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))
})

// setGroupFinalizers sets the finalizers of the group of the test's namespace, if it still exists.
func setGroupFinalizers(ctx context.Context, name string, finalizers ...string) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		group := &v1alpha1.OaatGroup{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, group); err != nil {
			return client.IgnoreNotFound(err)
		}
		group.Finalizers = finalizers
		return client.IgnoreNotFound(k8sClient.Update(ctx, group))
	})).To(Succeed())
}
