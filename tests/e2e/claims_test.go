//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// On kwok's nodes nothing mounts a volume; the scheduler still places a pod only once its claim
// is bound, so each claim is bound to a PersistentVolume of its own (a host path no node uses).
var _ = Describe("Items from PersistentVolumeClaims", func() {
	It("runs each claim the selector picks once, one at a time, each pod naming its claim, and never the unlabelled one", Label("floor"), func(ctx SpecContext) {
		nightly := map[string]string{"backup": "nightly"}
		for _, name := range []string{"data-1", "data-2", "data-3", "scratch"} {
			labels := nightly
			if name == "scratch" {
				labels = nil
			}
			pv, claim := support.BoundClaim(ns, name, ns, "/nonexistent/"+name, labels)
			create(ctx, pv, claim)
			DeferCleanup(func(ctx SpecContext) {
				Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, pv))).To(Succeed())
			})
		}
		Eventually(func(g Gomega) { support.ExpectClaimsBound(ctx, g, k8sClient, ns, 4) }).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())

		typ := newOaatType("pvc-backup", "2s", 0)
		typ.Spec.Template.Spec.Volumes = []corev1.Volume{{
			Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "{{oaat_item}}"}},
		}}
		group := newGroup("pvc-backup", "pvc-backup")
		group.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{PersistentVolumeClaims: &v1alpha1.PersistentVolumeClaimItems{
			Selector: &metav1.LabelSelector{MatchLabels: nightly},
		}}}
		create(ctx, typ, group)

		Eventually(func(g Gomega) {
			og := getGroup(ctx, g, "pvc-backup")
			g.Expect(og.Status.ItemCount).To(BeEquivalentTo(3))
			for _, item := range []string{"data-1", "data-2", "data-3"} {
				it := itemStatus(og, item)
				g.Expect(it).NotTo(BeNil(), "item %s", item)
				g.Expect(it.LastSuccess).NotTo(BeNil(), "item %s", item)
			}
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		pods := tracker.PodsOf(ns, "pvc-backup")
		Expect(itemsOf(pods)).To(ConsistOf("data-1", "data-2", "data-3"), "one pod per labelled claim")
		for _, rec := range pods {
			pod := &corev1.Pod{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: rec.Name}, pod)).To(Succeed())
			Expect(pod.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.PersistentVolumeClaim.ClaimName", rec.Item)),
				"pod %s mounts its item's claim", rec.Name)
		}
	}, SpecTimeout(2*time.Minute))
})
