package integration

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// itemSource is the label that makes a ConfigMap a source of items.
var itemSource = map[string]string{v1alpha1.LabelItemSource: "true"}

// updateObject reads the object of the test's namespace named name into obj, changes it with
// mutate and writes it, again on a conflict.
func updateObject[T client.Object](ctx SpecContext, name string, obj T, mutate func(T)) {
	GinkgoHelper()
	Expect(support.Update(ctx, k8sClient, client.ObjectKey{Namespace: ns, Name: name}, obj, mutate)).To(Succeed())
}

// updateConfigMap changes the ConfigMap's data.
func updateConfigMap(ctx SpecContext, name string, data map[string]string) {
	GinkgoHelper()
	updateObject(ctx, name, &corev1.ConfigMap{}, func(cm *corev1.ConfigMap) { cm.Data = data })
}

var _ = Describe("Items from ConfigMaps", func() {
	It("merges the items of a ConfigMap with the spec's, follows its edits, and reports what it skips", func(ctx SpecContext) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "dirs", Namespace: ns, Labels: itemSource},
			Data:       map[string]string{"list": "/srv/a\n\n# not an item\n/srv/b\n"},
		}
		group := newGroup("fromcm", "/srv/a")
		group.Spec.Suspend = true // the items' status is what this test is about
		group.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "dirs", Key: "list"}}}
		create(ctx, newOaatType(typeName), cm, group)
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "fromcm")
			g.Expect(itemNames(group)).To(Equal([]string{"/srv/a", "/srv/b"}))
			expectCondition(g, group, v1alpha1.ConditionItemsValid, metav1.ConditionTrue, v1alpha1.ReasonItemsRead)
		}).WithContext(ctx).Should(Succeed())

		By("adding an item and a line too long to be one")
		updateConfigMap(ctx, "dirs", map[string]string{"list": "/srv/a\n/srv/b\n/srv/c\n" + strings.Repeat("x", 300) + "\n"})
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "fromcm")
			g.Expect(itemNames(group)).To(Equal([]string{"/srv/a", "/srv/b", "/srv/c"}))
			g.Expect(group.Status.ItemCount).To(BeEquivalentTo(3))
			expectCondition(g, group, v1alpha1.ConditionItemsValid, metav1.ConditionFalse, v1alpha1.ReasonItemsSkipped)
			g.Expect(condition(group, v1alpha1.ConditionItemsValid).Message).To(ContainSubstring(`line 4 of key "list" of ConfigMap dirs is 300 characters long`))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("deleting the ConfigMap")
		Expect(k8sClient.Delete(ctx, cm)).To(Succeed())
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "fromcm")
			g.Expect(itemNames(group)).To(Equal([]string{"/srv/a"}), "the items of a deleted ConfigMap go (none has a pod)")
			g.Expect(condition(group, v1alpha1.ConditionItemsValid).Message).To(ContainSubstring("ConfigMap dirs not found"))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}, SpecTimeout(time.Minute))

	It("keeps a removed item's entry until its last pod is gone", func(ctx SpecContext) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "one", Namespace: ns, Labels: itemSource}, Data: map[string]string{"only": ""}}
		group := newGroup("shrinking", "kept")
		group.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "one"}}}
		create(ctx, newOaatType(typeName), cm, group)
		var pod *corev1.Pod
		Eventually(func(g Gomega) {
			pods, err := livePodsOf(ctx, "shrinking")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods).To(HaveLen(1))
			pod = &pods[0]
		}).WithContext(ctx).Should(Succeed())
		if pod.Annotations[v1alpha1.AnnotationItem] != "only" {
			finishPod(ctx, pod.Name, 0, "Completed")
			pod = waitForLivePod(ctx, "shrinking", pod.Name)
		}
		Expect(pod.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, "only"))

		By("removing the running item from the ConfigMap")
		updateConfigMap(ctx, "one", map[string]string{})
		Consistently(func(g Gomega) {
			g.Expect(itemNames(getGroup(ctx, g, "shrinking"))).To(ContainElement("only"), "the running item's entry is kept")
		}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())
		finishPod(ctx, pod.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "shrinking")
			g.Expect(itemNames(group)).To(Equal([]string{"kept"}))
			pods, err := podsOf(ctx, "shrinking")
			g.Expect(err).NotTo(HaveOccurred())
			for _, p := range pods {
				g.Expect(p.Annotations[v1alpha1.AnnotationItem]).NotTo(Equal("only"), "pod %s of the removed item is left", p.Name)
			}
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}, SpecTimeout(time.Minute))

	It("refuses a ConfigMap without the opt-in label, and notices the label added and removed", func(ctx SpecContext) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "private", Namespace: ns},
			Data:       map[string]string{"password": "hunter2"},
		}
		group := newGroup("optin", "/srv/a")
		group.Spec.Suspend = true // the items' status is what this test is about
		group.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "private"}}}
		create(ctx, newOaatType(typeName), cm, group)
		refused := func(g Gomega) {
			group := getGroup(ctx, g, "optin")
			g.Expect(itemNames(group)).To(Equal([]string{"/srv/a"}), "the data of a ConfigMap that did not opt in reaches the status")
			expectCondition(g, group, v1alpha1.ConditionItemsValid, metav1.ConditionFalse, v1alpha1.ReasonItemsSkipped)
			g.Expect(condition(group, v1alpha1.ConditionItemsValid).Message).To(ContainSubstring(
				`ConfigMap private is not an item source: it lacks the label oaat.io/item-source="true"`))
		}
		Eventually(refused).WithContext(ctx).Should(Succeed())
		Consistently(refused).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())

		setLabels := func(labels map[string]string) {
			GinkgoHelper()
			updateObject(ctx, "private", &corev1.ConfigMap{}, func(cm *corev1.ConfigMap) { cm.Labels = labels })
		}
		By("opting in: the label added")
		setLabels(itemSource)
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "optin")
			g.Expect(itemNames(group)).To(Equal([]string{"/srv/a", "password"}))
			expectCondition(g, group, v1alpha1.ConditionItemsValid, metav1.ConditionTrue, v1alpha1.ReasonItemsRead)
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("opting out: the label removed (the ConfigMap leaves the operator's label-selected watch)")
		setLabels(nil)
		Eventually(refused).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}, SpecTimeout(time.Minute))
})
