package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// A ClusterOaatLock deleted and created again (kubectl replace --force, a GitOps re-create) comes
// back without holders. Two installations of some namespaces share it; the one whose group runs
// under it has no leader at that moment (here: stopped). The other sees the runs of the first only
// through the lock's holders: were it to take the empty lock's slot at once, two pods would run
// under capacity 1 (issue 25; make chaos found it). The lock gives it no slot
// for its adoption window (locks.AdoptionWindow); the first installation, back within the window,
// lists its live run again, and the other waits until that run has ended.
var _ = Describe("A ClusterOaatLock re-created while another installation's run holds it", func() {
	const window = 8 * time.Second

	It("gives no slot to an installation of some namespaces before the others have listed their live runs again", func(ctx SpecContext) {
		labelNamespace(ctx, ns, "backup")
		second := sharingNamespace(ctx, "backup")
		first := ns
		stopManager()
		start := func(namespace string) func() {
			return startManagerWith(managerOptions{namespaces: []string{namespace}, adoptionWindow: window})
		}
		stopFirst, stopSecond := start(first), start(second)
		stopManager = func() {
			stopFirst()
			stopSecond()
		}
		lock := newClusterLock(ctx, 1)
		tracker := support.NewClusterLockTracker(lock.Name, []support.GroupKey{
			{Namespace: first, Group: "backups"}, {Namespace: second, Group: "backups"}}, labelTestPod)
		lockPods, err := support.WatchPods(ctx, clientset, "", tracker)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(lockPods.Stop()).To(Succeed(), "the watch of the cluster lock's pods did not see every pod event")
		})

		By("the first installation's group runs under the lock, once its window has passed")
		clusterLockedGroup(ctx, first, lock.Name, "a")
		running := waitForLivePodWithin(ctx, window+timeout, "backups")
		Expect(time.Since(lock.CreationTimestamp.Time)).To(BeNumerically(">=", window-time.Second),
			"the first run started before the new lock's adoption window had passed")
		markRunning(ctx, running.Name)
		Eventually(func(g Gomega) {
			g.Expect(getClusterLock(ctx, g, lock.Name).Status.Holders).To(HaveLen(1))
		}).WithContext(ctx).Should(Succeed())

		By("the first installation stops; the lock is deleted and created again, without holders")
		stopFirst()
		stopFirst = func() {}
		Expect(k8sClient.Delete(ctx, lock)).To(Succeed())
		lock = newClusterLock(ctx, 1)
		recreated := lock.CreationTimestamp.Time

		By("the second installation's group, due now, takes no slot of the re-created lock within its window")
		clusterLockedGroup(ctx, second, lock.Name, "b")
		inNamespace(second, func() { expectNoLivePod(ctx, "backups", window/2) })
		Expect(getClusterLock(ctx, Default, lock.Name).Status.Holders).To(BeEmpty())

		By("the first installation comes back and lists its live run in the lock again")
		stopFirst = start(first)
		Eventually(func(g Gomega) {
			holders := getClusterLock(ctx, g, lock.Name).Status.Holders
			g.Expect(holders).To(HaveLen(1))
			g.Expect(holders[0].Pod).To(Equal(running.Name))
		}).WithContext(ctx).Should(Succeed())

		By("after the window the second group still waits: the slot is the live run's")
		time.Sleep(time.Until(recreated.Add(window + 2*time.Second)))
		inNamespace(second, func() { expectNoLivePod(ctx, "backups", 3*time.Second) })
		Eventually(func(g Gomega) {
			inNamespace(second, func() {
				w := getGroup(ctx, g, "backups").Status.LockWait
				g.Expect(w).NotTo(BeNil())
				g.Expect(w.Locks).To(Equal([]string{v1alpha1.KindClusterOaatLock + "/" + lock.Name}))
			})
		}).WithContext(ctx).Should(Succeed())

		By("the live run ends: the second group takes the slot")
		finishPod(ctx, running.Name, 0, "Completed")
		inNamespace(second, func() { waitForLivePod(ctx, "backups") })
		Expect(tracker.Overlaps()).To(BeEmpty())
		Expect(tracker.MaxLive("", lock.Name)).To(Equal(1))
	}, SpecTimeout(2*time.Minute))
})
