//go:build e2e

package e2e

import (
	"context"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// kubectlOaat runs the kubectl-oaat plugin as the cluster's admin in the test's namespace and
// returns its output, failing g when it fails.
func kubectlOaat(ctx context.Context, g Gomega, args ...string) string {
	cmd := exec.CommandContext(ctx, paths.kubectlOaat, append([]string{"--kubeconfig", adminKubeconfig, "--namespace", ns}, args...)...)
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl oaat %v: %s", args, out)
	return string(out)
}

var _ = Describe("A shared lock", func() {
	It("lets at most two of twelve groups naming a lock of capacity 2 run at once, runs every item and frees the lock", Label("floor"), SpecTimeout(2*time.Minute), func(ctx SpecContext) {
		const capacity = 2
		items := []string{"a", "b", "c"}
		var names []string
		objs := []client.Object{newOaatType("quick", "1s", 0), support.Lock(ns, "shared", capacity)}
		for i := range 12 {
			group := support.Group(ns, "g"+itoa(i), "quick", items...).Locks("shared").Obj()
			names = append(names, group.Name)
			objs = append(objs, group)
		}
		// The pods of all twelve groups as one set, watched from before the first exists.
		lockTracker := support.NewLockTracker("shared", names, labelTestPod)
		watch, err := support.WatchPods(ctx, clientset, ns, lockTracker)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(watch.Stop()).To(Succeed(), "the watch of the lock did not see every pod event")
		})
		start := time.Now()
		create(ctx, objs...)

		By("showing the lock's holders in kubectl oaat locks while the groups run")
		Eventually(func(g Gomega) {
			out := kubectlOaat(ctx, g, "locks")
			g.Expect(out).To(MatchRegexp(`(?m)^LOCK\s+CAPACITY\s+HOLDERS\s+WAITING\s*$`))
			g.Expect(out).To(MatchRegexp(`(?m)^shared\s+2\s+[12]\s+\d+\s*$`))
			g.Expect(out).To(MatchRegexp(`(?m)^shared: held by g\d+ \(item [abc], pod `))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("running every item of every group once")
		Eventually(func(g Gomega) {
			for _, name := range names {
				group := getGroup(ctx, g, name)
				g.Expect(group.Status.CurrentRun).To(BeNil(), "group %s", name)
				for _, item := range items {
					g.Expect(itemOf(g, group, item).LastSuccess).NotTo(BeNil(), "group %s item %s", name, item)
				}
			}
		}).WithContext(ctx).WithTimeout(80 * time.Second).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("All %d items ran in %s\n", len(names)*len(items), time.Since(start).Round(time.Second))

		By("leaving no holder and no waiter")
		Eventually(func(g Gomega) {
			lock := &v1alpha1.OaatLock{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared"}, lock)).To(Succeed())
			g.Expect(lock.Status.Holders).To(BeEmpty())
			g.Expect(lock.Status.HolderCount).To(BeZero())
			g.Expect(lock.Status.WaitingGroups).To(BeZero())
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		out := kubectlOaat(ctx, Default, "locks", "shared")
		Expect(out).To(MatchRegexp(`(?m)^shared\s+2\s+0\s+0\s*$`))
		Expect(out).NotTo(ContainSubstring("held by"))

		By("never having more live pods of the groups than the lock's capacity, and using both slots")
		var excess []support.Overlap
		for _, o := range lockTracker.OverlapsIn(ns) {
			if len(o.Pods) > capacity {
				excess = append(excess, o)
			}
		}
		Expect(excess).To(BeEmpty(), "moments with more live pods of the groups naming the lock than its capacity")
		Expect(lockTracker.MaxLive(ns, "shared")).To(Equal(capacity))
		for _, name := range names {
			Expect(itemsOf(tracker.PodsOf(ns, name))).To(ConsistOf(items), "the pods of group %s: each item once", name)
		}
	})
})
