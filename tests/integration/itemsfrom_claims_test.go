package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// testFinalizer keeps a claim that is being deleted, as the pvc-protection controller (which
// envtest does not run) keeps one that a pod uses.
const testFinalizer = "test.oaat.io/keep"

// backupLabel is the label the claims of these tests are selected by.
var backupLabel = map[string]string{"backup": "nightly"}

// newClaim returns a PersistentVolumeClaim of the test's namespace with these labels. No
// controller binds it here: the operator reads only its metadata.
func newClaim(name string, labels map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
		},
	}
}

// setClaimLabels replaces the claim's labels.
func setClaimLabels(ctx SpecContext, name string, labels map[string]string) {
	GinkgoHelper()
	updateObject(ctx, name, &corev1.PersistentVolumeClaim{}, func(claim *corev1.PersistentVolumeClaim) { claim.Labels = labels })
}

// claimsSource selects the claims that carry backupLabel.
func claimsSource() []v1alpha1.ItemsSource {
	return []v1alpha1.ItemsSource{{PersistentVolumeClaims: &v1alpha1.PersistentVolumeClaimItems{
		Selector: &metav1.LabelSelector{MatchLabels: backupLabel},
	}}}
}

var _ = Describe("Items from PersistentVolumeClaims", func() {
	It("takes the labelled claims as items and follows their labels, creations and deletions", func(ctx SpecContext) {
		group := newGroup("fromclaims", "/srv/a")
		group.Spec.Suspend = true // the items' status is what this test is about
		group.Spec.OaatItemsFrom = claimsSource()
		create(ctx, newOaatType(typeName), newClaim("data-web", backupLabel), newClaim("data-db", backupLabel),
			newClaim("scratch", nil), group)
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "fromclaims")
			g.Expect(itemNames(group)).To(Equal([]string{"/srv/a", "data-db", "data-web"}))
			expectCondition(g, group, v1alpha1.ConditionItemsValid, metav1.ConditionTrue, v1alpha1.ReasonItemsRead)
		}).WithContext(ctx).Should(Succeed())

		By("creating a labelled claim")
		create(ctx, newClaim("data-mail", backupLabel))
		Eventually(func(g Gomega) {
			g.Expect(itemNames(getGroup(ctx, g, "fromclaims"))).To(Equal([]string{"/srv/a", "data-db", "data-mail", "data-web"}))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())

		By("labelling a claim")
		setClaimLabels(ctx, "scratch", backupLabel)
		Eventually(func(g Gomega) {
			g.Expect(itemNames(getGroup(ctx, g, "fromclaims"))).To(Equal([]string{"/srv/a", "data-db", "data-mail", "data-web", "scratch"}))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())

		By("unlabelling a claim (the old labels matched, the new ones do not)")
		setClaimLabels(ctx, "data-web", map[string]string{"backup": "never"})
		Eventually(func(g Gomega) {
			g.Expect(itemNames(getGroup(ctx, g, "fromclaims"))).To(Equal([]string{"/srv/a", "data-db", "data-mail", "scratch"}))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())

		By("deleting a claim that a finalizer keeps (as kubernetes.io/pvc-protection does while a pod uses it)")
		updateObject(ctx, "data-db", &corev1.PersistentVolumeClaim{}, func(claim *corev1.PersistentVolumeClaim) {
			claim.Finalizers = []string{testFinalizer}
		})
		Expect(k8sClient.Delete(ctx, newClaim("data-db", nil))).To(Succeed())
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "fromclaims")
			g.Expect(itemNames(group)).To(Equal([]string{"/srv/a", "data-mail", "scratch"}), "a claim being deleted is no item")
			g.Expect(group.Status.ItemCount).To(BeEquivalentTo(3))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
		claim := &corev1.PersistentVolumeClaim{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data-db"}, claim)).To(Succeed(), "the claim is still there, being deleted")
		Expect(claim.DeletionTimestamp).NotTo(BeNil())

		By("deleting a claim")
		Expect(k8sClient.Delete(ctx, newClaim("data-mail", nil))).To(Succeed())
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "fromclaims")
			g.Expect(itemNames(group)).To(Equal([]string{"/srv/a", "scratch"}))
			g.Expect(group.Status.ItemCount).To(BeEquivalentTo(2))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
		updateObject(ctx, "data-db", &corev1.PersistentVolumeClaim{}, func(claim *corev1.PersistentVolumeClaim) { claim.Finalizers = nil })
	}, SpecTimeout(time.Minute))

	It("mounts the item's claim, and refuses an item that is not a claim name before any pod", func(ctx SpecContext) {
		typ := newOaatType(typeName)
		typ.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "{{oaat_item}}"},
		}}}
		group := newGroup("mounting", "/srv/photos")
		group.Spec.OaatItemsFrom = claimsSource()
		create(ctx, typ, newClaim("data-web", backupLabel), group)

		pod := waitForLivePod(ctx, "mounting")
		Expect(pod.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, "data-web"))
		Expect(pod.Spec.Volumes).To(ContainElement(corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web"},
		}}))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "mounting")
			g.Expect(itemNames(group)).To(Equal([]string{"data-web"}), "an item that makes no claim name is not an item")
			expectCondition(g, group, v1alpha1.ConditionItemsValid, metav1.ConditionFalse, v1alpha1.ReasonItemsSkipped)
			g.Expect(condition(group, v1alpha1.ConditionItemsValid).Message).To(ContainSubstring(
				`OaatType ` + typeName + `: item "/srv/photos" makes claimName "/srv/photos" of volume data, not a valid claim name`))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
		expectEvent(ctx, "mounting", corev1.EventTypeWarning, v1alpha1.ReasonItemsSkipped)

		By("the run ending, no pod is made for the refused item")
		finishPod(ctx, pod.Name, 0, "Completed")
		expectNoLivePod(ctx, "mounting", 2*time.Second)
		pods, err := podsOf(ctx, "mounting")
		Expect(err).NotTo(HaveOccurred())
		Expect(pods).To(HaveLen(1))
	}, SpecTimeout(time.Minute))

	It("puts the item pod on the node where its ReadWriteOnce claim is in use, unless the template places it", func(ctx SpecContext) {
		typ := newOaatType(typeName)
		typ.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "{{oaat_item}}", ReadOnly: true},
		}}}
		shared := newClaim("data-shared", backupLabel)
		shared.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		// The application's pods: one on node-a mounts data-web; one on node-b mounts data-shared,
		// which any node may mount; one that has ended on node-c mounted data-web.
		app := func(name, node, claim string) *corev1.Pod {
			return &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "busybox"}},
					Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
					}}}},
			}
		}
		ended := app("old-web", "node-c", "data-web")
		create(ctx, typ, newClaim("data-web", backupLabel), shared, app("web", "node-a", "data-web"),
			app("shared", "node-b", "data-shared"), ended)
		ended.Status.Phase = corev1.PodSucceeded
		Expect(k8sClient.Status().Update(ctx, ended)).To(Succeed())
		group := newGroup("placed")
		group.Spec.OaatItemsFrom = claimsSource()
		create(ctx, group)

		onNodeA := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-a"}}},
			}}},
		}}
		want := map[string]*corev1.Affinity{"data-web": onNodeA, "data-shared": nil}
		var previous []string
		for range want {
			pod := waitForLivePod(ctx, "placed", previous...)
			item := pod.Annotations[v1alpha1.AnnotationItem]
			Expect(want).To(HaveKey(item))
			Expect(pod.Spec.Affinity).To(Equal(want[item]), "the affinity of the pod of %s", item)
			finishPod(ctx, pod.Name, 0, "Completed")
			previous = append(previous, pod.Name)
		}

		By("a template that places its pods itself")
		updateObject(ctx, typeName, &v1alpha1.OaatType{}, func(typ *v1alpha1.OaatType) {
			typ.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		})
		Expect(k8sClient.Create(ctx, newOnDemandRun("again", "placed", "data-web"))).To(Succeed())
		pod := waitForLivePod(ctx, "placed", previous...)
		Expect(pod.Spec.NodeSelector).To(Equal(map[string]string{"disk": "ssd"}))
		Expect(pod.Spec.Affinity).To(BeNil())
	}, SpecTimeout(time.Minute))
})
