//go:build realnode

package realnode

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// backupScript writes the item into the claim mounted at /data, working for two seconds between
// the node's uptime it prints at its start and at its end (timedRun's clock).
const backupScript = `read s _ </proc/uptime; echo "$1" >/data/backed-up; sleep 2; read e _ </proc/uptime; echo "$s $e"`

// hostPathClaim makes, for the test's namespace, a claim bound to a PersistentVolume of its own:
// a directory of this machine (the real node's), dir/name. storageClass, the test's own, keeps
// other claims away from the volume. The volume, cluster-scoped, is deleted after the test.
func hostPathClaim(ctx context.Context, dir, storageClass, name string, labels map[string]string) {
	GinkgoHelper()
	path := filepath.Join(dir, name)
	Expect(os.MkdirAll(path, 0o755)).To(Succeed())
	pv, claim := support.BoundClaim(ns, name, storageClass, path, labels)
	create(ctx, pv, claim)
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, pv))).To(Succeed())
	})
}

// expectClaimsBound waits until the test's namespace has count claims, all Bound.
func expectClaimsBound(ctx context.Context, count int) {
	GinkgoHelper()
	Eventually(func(g Gomega) { support.ExpectClaimsBound(ctx, g, k8sClient, ns, count) }).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
}

var _ = Describe("Items from PersistentVolumeClaims on the real node", func() {
	It("backs up each labelled claim in turn, one labelled while the group runs too, and never mounts the unlabelled one", SpecTimeout(5*time.Minute), func(ctx SpecContext) {
		dir := filepath.Join(cluster.StateDir, "volumes", ns)
		DeferCleanup(func() { Expect(os.RemoveAll(dir)).To(Succeed()) })
		nightly := map[string]string{"backup": "nightly"}
		for _, name := range []string{"data-1", "data-2", "data-3"} {
			hostPathClaim(ctx, dir, ns, name, nightly)
		}
		hostPathClaim(ctx, dir, ns, "data-4", nil)
		hostPathClaim(ctx, dir, ns, "scratch", nil)
		expectClaimsBound(ctx, 5)

		container := busybox("main", backupScript)
		container.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		typ := newType("pvc-backup", corev1.PodSpec{Containers: []corev1.Container{container}, Volumes: []corev1.Volume{{
			Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "{{oaat_item}}"}},
		}}})
		group := newGroup("pvc-backup", "pvc-backup")
		group.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{PersistentVolumeClaims: &v1alpha1.PersistentVolumeClaimItems{
			Selector: &metav1.LabelSelector{MatchLabels: nightly},
		}}}
		create(ctx, typ, group)

		By("labelling data-4 while the group runs its first item")
		Eventually(func(g Gomega) {
			og := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(group), og)).To(Succeed())
			g.Expect(og.Status.CurrentRun).NotTo(BeNil(), "no run has started")
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(support.Update(ctx, k8sClient, client.ObjectKey{Namespace: ns, Name: "data-4"}, &corev1.PersistentVolumeClaim{},
			func(claim *corev1.PersistentVolumeClaim) { claim.Labels = nightly })).To(Succeed())

		var runs []processRun
		for _, item := range []string{"data-1", "data-2", "data-3", "data-4"} {
			status := waitForOutcome(ctx, "pvc-backup", item, 2*time.Minute)
			Expect(status.LastSuccess).NotTo(BeNil(), "item %q: the run failed (%s, exit %v)", item, status.LastReason, status.LastExitCode)
			written, err := os.ReadFile(filepath.Join(dir, item, "backed-up"))
			Expect(err).NotTo(HaveOccurred(), "the run of %s wrote nothing into its claim's volume", item)
			Expect(string(written)).To(Equal(item+"\n"), "what the run wrote into claim %s", item)
			Eventually(func(g Gomega) { runs = append(runs, processRunOf(ctx, g, "pvc-backup", item, status)) }).WithContext(ctx).Should(Succeed())
		}
		Expect(overlapping(runs)).To(BeEmpty(), "two backups ran at once (node uptime)")

		og := &v1alpha1.OaatGroup{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(group), og)).To(Succeed())
		Expect(og.Status.ItemCount).To(BeEquivalentTo(4))
		_, err := os.Stat(filepath.Join(dir, "scratch", "backed-up"))
		Expect(os.IsNotExist(err)).To(BeTrue(), "the unlabelled claim scratch was written to (%v)", err)
		for _, rec := range tracker.PodsOf(ns, "pvc-backup") {
			Expect(rec.Item).NotTo(Equal("scratch"), "pod %s ran the unlabelled claim", rec.Name)
		}
		Expect(tracker.PodsOf(ns, "pvc-backup")).To(HaveLen(4), "one pod per labelled claim")
	})

	It("ends the run of a claim that cannot be mounted with PendingTimeout, and backs up the others", SpecTimeout(4*time.Minute), func(ctx SpecContext) {
		dir := filepath.Join(cluster.StateDir, "volumes", ns)
		DeferCleanup(func() { Expect(os.RemoveAll(dir)).To(Succeed()) })
		nightly := map[string]string{"backup": "nightly"}
		hostPathClaim(ctx, dir, ns, "data-1", nightly)
		// a-unbound: no volume of its class exists, its pod stays Pending. Neither item has run, so
		// which runs first is the schedule's random tie-break; either order must end the same.
		unbound := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "a-unbound", Namespace: ns, Labels: nightly},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &ns,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
			},
		}
		create(ctx, unbound)

		container := busybox("main", backupScript)
		container.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		typ := newType("pvc-backup", corev1.PodSpec{Containers: []corev1.Container{container}, Volumes: []corev1.Volume{{
			Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "{{oaat_item}}"}},
		}}})
		group := newGroup("pvc-backup", "pvc-backup")
		group.Spec.PendingTimeout = "10s"
		// One stopped run of a-unbound, whichever item runs first: it then cools off, not retried.
		group.Spec.FailureCoolOff = "1h"
		group.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{PersistentVolumeClaims: &v1alpha1.PersistentVolumeClaimItems{
			Selector: &metav1.LabelSelector{MatchLabels: nightly},
		}}}
		create(ctx, typ, group)

		stuck := waitForOutcome(ctx, "pvc-backup", "a-unbound", time.Minute)
		Expect(stuck.LastFailure).NotTo(BeNil())
		Expect(stuck.LastReason).To(Equal(string(v1alpha1.ReasonPendingTimeout)))
		Eventually(func(g Gomega) {
			g.Expect(runEvents(ctx, g, "pvc-backup", stuck.LastPodName, string(v1alpha1.ReasonRunStopping))).To(Equal(1))
		}).WithContext(ctx).Should(Succeed())
		events, err := clientset.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		var stopping []string
		for _, e := range events.Items {
			if e.Reason == string(v1alpha1.ReasonRunStopping) {
				stopping = append(stopping, e.Note)
			}
		}
		GinkgoWriter.Printf("RunStopping: %q\n", stopping)
		Expect(stopping).To(ConsistOf(ContainSubstring("no container started within spec.pendingTimeout 10s (not scheduled: Unschedulable")))

		done := waitForOutcome(ctx, "pvc-backup", "data-1", time.Minute)
		Expect(done.LastSuccess).NotTo(BeNil(), "data-1: the run failed (%s, exit %v)", done.LastReason, done.LastExitCode)
		written, err := os.ReadFile(filepath.Join(dir, "data-1", "backed-up"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(written)).To(Equal("data-1\n"))
	})
})
