//go:build olmcatalog

package olmcatalog

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The upgrade's namespace (the operator's, OwnNamespace), its CatalogSource, and the manager's
// Lease (v1alpha1.LeaderElectionID).
const (
	upgradeNamespace = "oaat-upgrade"
	upgradeCatalog   = "oaat-upgrade-catalog"
)

var _ = Describe("Upgrading from the previous release through the catalog", func() {
	It("keeps every group working: one pod at a time throughout, each run recorded once, status kept, then quiet", func(ctx SpecContext) {
		start := time.Now()
		mark := func(what string) {
			AddReportEntry("upgrade: "+what, time.Since(start).Round(time.Millisecond).String())
			GinkgoWriter.Printf("upgrade timeline: %s at +%s\n", what, time.Since(start).Round(time.Millisecond))
		}
		createNamespace(ctx, upgradeNamespace)
		DeferCleanup(func(ctx SpecContext) {
			// While the operator runs (docs/olm.md's uninstall).
			Expect(support.DeleteGroups(ctx, k8sClient, time.Minute, upgradeNamespace)).To(Succeed())
			for _, csv := range []string{csvName, previousCSVName} {
				_ = dynClient.Resource(support.GVRClusterServiceVersion).Namespace(upgradeNamespace).Delete(ctx, csv, metav1.DeleteOptions{})
			}
			uninstall(ctx, installMode{InstallNamespace: upgradeNamespace})
			_ = dynClient.Resource(support.GVRCatalogSource).Namespace(olmNamespace).Delete(ctx, upgradeCatalog, metav1.DeleteOptions{})
			deleteNamespaces(ctx, upgradeNamespace)
			expectNothingLeft(ctx)
		}, NodeTimeout(5*time.Minute))

		upgrade := support.Upgrade{Client: k8sClient, Namespace: upgradeNamespace, RunFor: 20 * time.Second}
		tracker := support.NewOverlapTracker(support.OverlapTrackerOptions{KeepHistory: true})
		pw, err := support.WatchPods(ctx, clientset, upgradeNamespace, tracker)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(pw.Stop()).To(Succeed(), "the pod watch") })

		By("installing the previous release " + previousCSVName + " from its own catalog image")
		createCatalogSourceOf(ctx, upgradeCatalog, env.previousCatalogImg)
		objects.Create(ctx, support.GVROperatorGroup, support.OperatorGroup("oaat", upgradeNamespace, []string{upgradeNamespace}))
		objects.Create(ctx, support.GVRSubscription, support.Subscription{
			Name: packageName, Namespace: upgradeNamespace, Package: packageName, Channel: channelName,
			CatalogSource: upgradeCatalog, CatalogNamespace: olmNamespace, StartingCSV: previousCSVName,
		}.Object())
		expectCSVSucceeded(ctx, upgradeNamespace, previousCSVName)
		expectPodsOnRealNode(ctx, upgradeNamespace, "control-plane=controller-manager", env.previousImg)
		mark("previous release installed")

		By("creating groups of several kinds, one of them mid-run when the upgrade starts, and an OaatRun left pending")
		upgrade.Create(ctx)
		Eventually(func(g Gomega) { upgrade.Started(ctx, g) }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		mark("first runs started")
		before := upgrade.Statuses(ctx)

		By("publishing the new release: the CatalogSource's image becomes the new catalog")
		leaseBefore := leaseHolder(ctx)
		upgradeStart := time.Now()
		cs := objects.Get(ctx, Default, support.GVRCatalogSource, olmNamespace, upgradeCatalog)
		Expect(unstructured.SetNestedField(cs.Object, env.catalogImg, "spec", "image")).To(Succeed())
		_, err = dynClient.Resource(support.GVRCatalogSource).Namespace(olmNamespace).Update(ctx, cs, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		mark("upgrade started")
		expectCSVSucceeded(ctx, upgradeNamespace, csvName)
		Eventually(func(g Gomega) {
			_, err := dynClient.Resource(support.GVRClusterServiceVersion).Namespace(upgradeNamespace).Get(ctx, previousCSVName, metav1.GetOptions{})
			g.Expect(err).To(HaveOccurred(), "the replaced CSV %s is still there", previousCSVName)
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		expectPodsOnRealNode(ctx, upgradeNamespace, "control-plane=controller-manager", env.img)
		mark("new CSV Succeeded, old one gone")
		var leaderAt time.Time
		Eventually(func(g Gomega) {
			holder := leaseHolder(ctx)
			g.Expect(holder).NotTo(BeEmpty())
			g.Expect(holder).NotTo(Equal(leaseBefore), "the Lease is still held by the previous manager")
			leaderAt = time.Now()
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		mark("new manager leader")

		By("waiting until every due item has run, the pending OaatRun is served and one made now too")
		upgrade.CreateRun(ctx, "after-upgrade", "a")
		Eventually(func(g Gomega) { upgrade.Done(ctx, g) }).WithContext(ctx).WithTimeout(5*time.Minute).Should(Succeed(),
			func() string { return describePods(ctx, upgradeNamespace) })
		firstByNew := upgrade.FirstPodSince(tracker, leaderAt.Add(-time.Second))
		mark("all due items done")
		Expect(firstByNew.IsZero()).To(BeFalse(), "no item pod was created after the new manager became leader")
		AddReportEntry("upgrade: first pod created by the new manager", firstByNew.Sub(start).Round(time.Second).String())
		GinkgoWriter.Printf("upgrade: from the CatalogSource's update to the new leader %s\n", leaderAt.Sub(upgradeStart).Round(time.Millisecond))

		By("checking one pod at a time in every group, before, during and after the upgrade")
		Expect(tracker.OverlapsIn(upgradeNamespace)).To(BeEmpty(), tracker.Describe(upgradeNamespace))

		By("checking that every finished item pod was recorded exactly once, by either manager")
		upgrade.ExpectRecordedOnce(ctx, tracker)

		By("checking that no item's record went back")
		upgrade.ExpectKept(ctx, tracker, before)

		By("checking that nothing changes for a quiet minute with nothing due")
		upgrade.ExpectQuiet(ctx, time.Minute)

		By("checking the CRDs' stored versions")
		upgrade.ExpectStoredVersions(ctx)
		mark("checked")
	}, SpecTimeout(15*time.Minute))
})

// expectCSVSucceeded waits until the CSV reaches Succeeded in the namespace.
func expectCSVSucceeded(ctx context.Context, namespace, name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		csv := objects.Get(ctx, g, support.GVRClusterServiceVersion, namespace, name)
		phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase")
		g.Expect(phase).To(Equal("Succeeded"), "CSV %s: %v", name, csv.Object["status"])
	}).WithContext(ctx).WithTimeout(8*time.Minute).Should(Succeed(), func() string { return describePods(ctx, namespace) })
}

// leaseHolder is the holder of the manager's Lease in the upgrade's namespace, "" without one.
func leaseHolder(ctx context.Context) string {
	lease := &coordinationv1.Lease{}
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: upgradeNamespace, Name: v1alpha1.LeaderElectionID}, lease)
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}
