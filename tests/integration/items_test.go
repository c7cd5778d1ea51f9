package integration

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Items and their schedule", func() {
	It("runs an item again once its frequency has passed since its last success", func(ctx SpecContext) {
		group := newGroup("frequent", "a")
		group.Spec.Frequency = "3s"
		create(ctx, newOaatType(typeName), group)

		first := waitForLivePod(ctx, "frequent")
		succeededAt := finishPod(ctx, first.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			it := itemStatus(getGroup(ctx, g, "frequent"), "a")
			g.Expect(it).NotTo(BeNil())
			g.Expect(it.LastSuccess).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())

		By("waiting for the frequency, counted from the end of the successful run")
		dueAt := succeededAt.Add(3 * time.Second)
		expectNoLivePod(ctx, "frequent", time.Until(dueAt)-300*time.Millisecond)
		second := waitForLivePodWithin(ctx, 8*time.Second, "frequent", first.Name)
		Expect(second.Labels).To(HaveKeyWithValue(v1alpha1.LabelRun, "2"))
		Expect(second.CreationTimestamp.Time).NotTo(BeTemporally("<", dueAt))

		By("keeping only the latest finished pod of the item")
		finishPod(ctx, second.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			pods, err := podsOf(ctx, "frequent")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(podNames(pods)).To(ContainElement(second.Name))
			g.Expect(podNames(pods)).NotTo(ContainElement(first.Name))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("runs items that are neither label values nor DNS names, passing them on exactly", func(ctx SpecContext) {
		long := strings.Repeat("x/", 126) + "y" // 253 characters, the longest item
		items := [2]string{"/srv/Photos of $HOME/2024", long}
		create(ctx, newOaatType(typeName), newGroup("awkward", items[:]...))

		var previous []string
		for range items {
			pod := waitForLivePod(ctx, "awkward", previous...)
			item := pod.Annotations[v1alpha1.AnnotationItem]
			Expect(items).To(ContainElement(item), "the annotation holds the exact item")
			Expect(pod.Labels[v1alpha1.LabelItem]).NotTo(Equal(item))
			Expect(validation.IsValidLabelValue(pod.Labels[v1alpha1.LabelItem])).To(BeEmpty())
			Expect(validation.IsDNS1123Label(pod.Name)).To(BeEmpty())
			// The kubelet expands $(VAR) in env values and args: a literal $ is written $$.
			escaped := strings.ReplaceAll(item, "$", "$$")
			Expect(pod.Spec.Containers[0].Env[0]).To(Equal(corev1.EnvVar{Name: v1alpha1.EnvItem, Value: escaped}))
			Expect(pod.Spec.Containers[0].Args).To(Equal([]string{"echo processing " + escaped}))
			finishPod(ctx, pod.Name, 0, "Completed")
			previous = append(previous, pod.Name)
		}
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "awkward")
			g.Expect(itemNames(group)).To(ConsistOf(items[0], items[1]))
			for _, item := range items {
				g.Expect(itemStatus(group, item).LastSuccess).NotTo(BeNil(), "lastSuccess of item %q", item)
			}
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))
})
