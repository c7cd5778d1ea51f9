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

// labelLockTeam is the namespace label the spec's ClusterOaatLock selects namespaces by.
const labelLockTeam = "e2e.oaat.io/lock-team"

// Serial: a ClusterOaatLock is cluster-wide, and the transcripts of kubectl oaat locks list them all.
var _ = Describe("A ClusterOaatLock", Serial, func() {
	It("lets one pod at a time run of nine groups in three namespaces, runs every item and frees the lock", SpecTimeout(3*time.Minute), func(ctx SpecContext) {
		items := []string{"a", "b"}
		namespaces := []string{ns}
		for range 2 {
			extra := support.CreateSuiteNamespace(ctx, k8sClient, "oaat-e2e-", labelSuite)
			namespaces = append(namespaces, extra.Name)
			DeferCleanup(func(ctx SpecContext) {
				Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroup{}, client.InNamespace(extra.Name))).To(Succeed())
				Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, extra))).To(Succeed())
			})
		}
		// Selected by a label of the test's own value, so that no other namespace may use the lock.
		team := ns
		for _, name := range namespaces {
			namespace := &corev1.Namespace{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, namespace)).To(Succeed())
			namespace.Labels[labelLockTeam] = team
			Expect(k8sClient.Update(ctx, namespace)).To(Succeed())
		}
		lock := support.ClusterLock(ns, 1, map[string]string{labelLockTeam: team})
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, lock))).To(Succeed()) })

		var keys []support.GroupKey
		objs := []client.Object{lock}
		for _, namespace := range namespaces {
			objs = append(objs, support.KwokType(namespace, "quick", "1s", 0))
			for i := range 3 {
				group := support.Group(namespace, "g"+itoa(i), "quick", items...).ClusterLocks(lock.Name).Obj()
				keys = append(keys, support.GroupKey{Namespace: namespace, Group: group.Name})
				objs = append(objs, group)
			}
		}
		// The pods of all nine groups as one set, watched from before the first exists.
		lockTracker := support.NewClusterLockTracker(lock.Name, keys, labelTestPod)
		watch, err := support.WatchPods(ctx, clientset, metav1.NamespaceAll, lockTracker)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(watch.Stop()).To(Succeed(), "the watch of the lock did not see every pod event")
		})
		start := time.Now()
		create(ctx, objs...)

		By("running every item of every group once")
		Eventually(func(g Gomega) {
			for _, key := range keys {
				group := &v1alpha1.OaatGroup{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Group}, group)).To(Succeed())
				g.Expect(group.Status.CurrentRun).To(BeNil(), "group %v", key)
				for _, item := range items {
					g.Expect(itemOf(g, group, item).LastSuccess).NotTo(BeNil(), "group %v item %s", key, item)
				}
			}
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("All %d items ran in %s\n", len(keys)*len(items), time.Since(start).Round(time.Second))

		By("leaving no holder and no waiter")
		Eventually(func(g Gomega) {
			got := &v1alpha1.ClusterOaatLock{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lock), got)).To(Succeed())
			g.Expect(got.Status.Holders).To(BeEmpty())
			g.Expect(got.Status.WaitingGroups).To(BeZero())
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		By("never having two live pods of the nine groups at once, whatever their namespace")
		var excess []support.Overlap
		for _, o := range lockTracker.OverlapsIn("") {
			if len(o.Pods) > 1 {
				excess = append(excess, o)
			}
		}
		Expect(excess).To(BeEmpty(), "moments with more live pods of the groups naming the lock than its capacity")
		Expect(lockTracker.MaxLive("", lock.Name)).To(Equal(1))
		for _, key := range keys {
			Expect(itemsOf(tracker.PodsOf(key.Namespace, key.Group))).To(ConsistOf(items), "the pods of group %v: each item once", key)
		}
	})
})
