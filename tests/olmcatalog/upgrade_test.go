//go:build olmcatalog

package olmcatalog

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
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
		createUpgradeWorkload(ctx)
		Eventually(func(g Gomega) {
			g.Expect(upgradeGroup(ctx, g, "steady").Status.CurrentRun).NotTo(BeNil(), "steady runs an item")
			g.Expect(upgradeRun(ctx, g).Status.Phase).To(Equal(v1alpha1.OaatRunPending), "the OaatRun waits for the running item")
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		mark("first runs started")
		before := upgradeStatuses(ctx)

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
		Expect(k8sClient.Create(ctx, &v1alpha1.OaatRun{
			ObjectMeta: metav1.ObjectMeta{Name: "after-upgrade", Namespace: upgradeNamespace},
			Spec:       v1alpha1.OaatRunSpec{OaatGroup: "steady", Item: "a"},
		})).To(Succeed())
		Eventually(func(g Gomega) {
			for _, name := range []string{"steady", "eachonce"} {
				group := upgradeGroup(ctx, g, name)
				g.Expect(group.Status.CurrentRun).To(BeNil(), "%s still runs", name)
				g.Expect(support.ItemsSucceeded(group, group.Spec.OaatItems)).To(Succeed(), name)
			}
			for _, run := range []string{"pending", "after-upgrade"} {
				g.Expect(upgradeRunNamed(ctx, g, run).Status.Phase).To(Equal(v1alpha1.OaatRunSucceeded), "OaatRun %s", run)
			}
		}).WithContext(ctx).WithTimeout(5*time.Minute).Should(Succeed(), func() string { return describePods(ctx, upgradeNamespace) })
		var firstByNew time.Time
		for _, key := range []string{"steady", "eachonce"} {
			for _, p := range tracker.PodsOf(upgradeNamespace, key) {
				if p.Created.After(leaderAt.Add(-time.Second)) && (firstByNew.IsZero() || p.Created.Time.Before(firstByNew)) {
					firstByNew = p.Created.Time
				}
			}
		}
		mark("all due items done")
		Expect(firstByNew.IsZero()).To(BeFalse(), "no item pod was created after the new manager became leader")
		AddReportEntry("upgrade: first pod created by the new manager", firstByNew.Sub(start).Round(time.Second).String())
		GinkgoWriter.Printf("upgrade: from the CatalogSource's update to the new leader %s\n", leaderAt.Sub(upgradeStart).Round(time.Millisecond))

		By("checking one pod at a time in every group, before, during and after the upgrade")
		Expect(tracker.OverlapsIn(upgradeNamespace)).To(BeEmpty(), tracker.Describe(upgradeNamespace))

		By("checking that every finished item pod was recorded exactly once, by either manager")
		expectEachRunRecordedOnce(ctx, tracker)

		By("checking that no item's record went back")
		after := upgradeStatuses(ctx)
		for key, was := range before {
			now, ok := after[key]
			Expect(ok).To(BeTrue(), "item %s lost its status entry", key)
			for _, pair := range [][2]*metav1.Time{{was.LastSuccess, now.LastSuccess}, {was.LastFailure, now.LastFailure}, {was.LastStarted, now.LastStarted}} {
				if pair[0] != nil {
					Expect(pair[1]).NotTo(BeNil(), "item %s: a recorded time was dropped", key)
					Expect(pair[1].Before(pair[0])).To(BeFalse(), "item %s: a recorded time went back", key)
				}
			}
		}
		blackout := upgradeGroup(ctx, Default, "blackout")
		Expect(tracker.PodsOf(upgradeNamespace, "blackout")).To(BeEmpty(), "the group in its blackout window ran a pod")
		Expect(blackout.Status.Items).To(HaveLen(1))
		Expect(blackout.Status.Items[0].WaitReason).To(Equal(v1alpha1.WaitBlackout), "the blackout group's item")

		By("checking that nothing changes for a quiet minute with nothing due")
		quiet := resourceVersions(ctx)
		Consistently(func(g Gomega) {
			g.Expect(resourceVersions(ctx)).To(Equal(quiet))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(5 * time.Second).Should(Succeed())

		By("checking the CRDs' stored versions")
		for _, name := range support.OwnedCRDs {
			crd, err := dynClient.Resource(support.GVRCustomResourceDefinition).Get(ctx, name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
			Expect(stored).To(Equal([]string{"v1alpha1"}), name)
		}
		mark("checked")
	}, SpecTimeout(15*time.Minute))
})

// createUpgradeWorkload creates, in the upgrade's namespace, a type whose pods run 20 s (the
// groups' work spans the upgrade) and
// groups of several kinds: steady (frequency, three items), eachonce (mode EachOnce), blackout
// (in a blackout window around now: it must wait, with its status kept); then an OaatRun for
// steady's last item, pending behind its first run.
func createUpgradeWorkload(ctx context.Context) {
	GinkgoHelper()
	ot := &v1alpha1.OaatType{
		ObjectMeta: metav1.ObjectMeta{Name: "work", Namespace: upgradeNamespace},
		Spec: v1alpha1.OaatTypeSpec{
			Type: v1alpha1.OaatTypePod,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "main", Image: "busybox", Command: []string{"sh", "-c", `sleep 20; echo "done $OAAT_ITEM"`},
				}},
			}},
		},
	}
	now := time.Now().UTC()
	groups := []*v1alpha1.OaatGroup{
		{ObjectMeta: metav1.ObjectMeta{Name: "steady", Namespace: upgradeNamespace},
			Spec: v1alpha1.OaatGroupSpec{OaatType: "work", OaatItems: []string{"a", "b", "c"}, Frequency: "1h"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "eachonce", Namespace: upgradeNamespace},
			Spec: v1alpha1.OaatGroupSpec{OaatType: "work", OaatItems: []string{"x", "y"}, Mode: v1alpha1.ModeEachOnce}},
		{ObjectMeta: metav1.ObjectMeta{Name: "blackout", Namespace: upgradeNamespace},
			Spec: v1alpha1.OaatGroupSpec{OaatType: "work", OaatItems: []string{"p"}, Frequency: "1h",
				BlackoutWindows: []v1alpha1.BlackoutWindow{{
					Start: now.Add(-time.Hour).Format("15:04"), End: now.Add(2 * time.Hour).Format("15:04"), TimeZone: "UTC",
				}}}},
	}
	Expect(k8sClient.Create(ctx, ot)).To(Succeed())
	for _, g := range groups {
		Expect(k8sClient.Create(ctx, g)).To(Succeed(), "creating OaatGroup %s", g.Name)
	}
	Eventually(func(g Gomega) {
		g.Expect(upgradeGroup(ctx, g, "steady").Status.CurrentRun).NotTo(BeNil())
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	run := &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: upgradeNamespace},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: "steady", Item: "c"},
	}
	Expect(k8sClient.Create(ctx, run)).To(Succeed())
}

func upgradeGroup(ctx context.Context, g Gomega, name string) *v1alpha1.OaatGroup {
	group := &v1alpha1.OaatGroup{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: upgradeNamespace, Name: name}, group)).To(Succeed())
	return group
}

func upgradeRun(ctx context.Context, g Gomega) *v1alpha1.OaatRun {
	return upgradeRunNamed(ctx, g, "pending")
}

func upgradeRunNamed(ctx context.Context, g Gomega, name string) *v1alpha1.OaatRun {
	run := &v1alpha1.OaatRun{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: upgradeNamespace, Name: name}, run)).To(Succeed())
	return run
}

// upgradeStatuses returns every item's status of the namespace's groups, by group/item.
func upgradeStatuses(ctx context.Context) map[string]v1alpha1.ItemStatus {
	GinkgoHelper()
	groups := &v1alpha1.OaatGroupList{}
	Expect(k8sClient.List(ctx, groups, client.InNamespace(upgradeNamespace))).To(Succeed())
	out := map[string]v1alpha1.ItemStatus{}
	for _, g := range groups.Items {
		for _, it := range g.Status.Items {
			out[g.Name+"/"+it.Name] = it
		}
	}
	return out
}

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

// expectEachRunRecordedOnce checks that no run was recorded twice or lost across the managers:
// each item's status names its newest item pod, which has ended; an item of the EachOnce group,
// whose round asks one success of it, has exactly one pod (an outcome lost in the handover would
// have run it again); and no pod has two outcome events (RunSucceeded or RunFailed). Events are
// best effort (a process that stops may not have sent its last ones): pods without one are
// reported, not failed.
func expectEachRunRecordedOnce(ctx context.Context, tracker *support.OverlapTracker) {
	GinkgoHelper()
	for _, name := range []string{"steady", "eachonce"} {
		group := upgradeGroup(ctx, Default, name)
		pods := tracker.PodsOf(upgradeNamespace, name)
		for _, it := range group.Status.Items {
			var newest *support.PodRecord
			count := 0
			for i := range pods {
				if pods[i].Item != it.Name {
					continue
				}
				count++
				if newest == nil || pods[i].Created.After(newest.Created.Time) {
					newest = &pods[i]
				}
			}
			Expect(newest).NotTo(BeNil(), "no pod of %s/%s", name, it.Name)
			Expect(newest.Ended.IsZero()).To(BeFalse(), "the newest pod of %s/%s has not ended", name, it.Name)
			Expect(it.LastPodName).To(Equal(newest.Name), "the status of %s/%s names its newest pod", name, it.Name)
			if name == "eachonce" {
				Expect(count).To(Equal(1), "pods of %s/%s", name, it.Name)
			}
		}
	}
	events := &eventsv1.EventList{}
	Expect(k8sClient.List(ctx, events, client.InNamespace(upgradeNamespace))).To(Succeed())
	recorded := map[string]int{}
	for _, e := range events.Items {
		if e.Reason != string(v1alpha1.ReasonRunSucceeded) && e.Reason != string(v1alpha1.ReasonRunFailed) {
			continue
		}
		if _, after, ok := strings.Cut(e.Note, " in pod "); ok {
			n := 1
			if e.Series != nil {
				n = int(e.Series.Count)
			}
			// "Item "a" succeeded in pod NAME: Completed, exit code 0"
			recorded[strings.TrimRight(strings.Fields(after)[0], ":,")] += n
		}
	}
	var missing []string
	for _, name := range []string{"steady", "eachonce"} {
		for _, p := range tracker.PodsOf(upgradeNamespace, name) {
			Expect(recorded[p.Name]).To(BeNumerically("<=", 1), "outcome events of pod %s", p.Name)
			if recorded[p.Name] == 0 {
				missing = append(missing, fmt.Sprintf("%s (ended %s)", p.Name, p.Ended.Format(time.RFC3339)))
			}
		}
	}
	AddReportEntry("upgrade: item pods without an outcome event", fmt.Sprintf("%d %v", len(missing), missing))
}

// resourceVersions maps every object of the upgrade's namespace that the operator writes or
// owns (groups, types, OaatRuns, pods) to its resourceVersion.
func resourceVersions(ctx context.Context) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	lists := map[string]client.ObjectList{
		"OaatGroup": &v1alpha1.OaatGroupList{}, "OaatType": &v1alpha1.OaatTypeList{},
		"OaatRun": &v1alpha1.OaatRunList{}, "Pod": &corev1.PodList{},
	}
	for kind, list := range lists {
		Expect(k8sClient.List(ctx, list, client.InNamespace(upgradeNamespace))).To(Succeed())
		items, err := meta.ExtractList(list)
		Expect(err).NotTo(HaveOccurred())
		for _, item := range items {
			o, err := meta.Accessor(item)
			Expect(err).NotTo(HaveOccurred())
			if kind == "Pod" && o.GetLabels()["control-plane"] != "" {
				continue // the manager's own pod: the kubelet updates it
			}
			version := o.GetResourceVersion()
			if kind == "Pod" {
				// The operator only creates and deletes item pods (a new key, a missing one, or a
				// deletion under way); the real node's kubelet still updates a finished pod's
				// status long after the phase that recorded its run (a clean-clone run saw one
				// move 10 s into the quiet minute, the groups unchanged).
				version = fmt.Sprintf("generation %d, deleting %t", o.GetGeneration(), o.GetDeletionTimestamp() != nil)
			}
			out[fmt.Sprintf("%s %s/%s", kind, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, o.GetUID())] = version
		}
	}
	return out
}
