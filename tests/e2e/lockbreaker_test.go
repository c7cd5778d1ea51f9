//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

var _ = Describe("The circuit breaker a lock carries", func() {
	// Two groups back up to one NAS, which their OaatLock (capacity 2, circuitBreaker: Shared)
	// stands for (support.NewSharedBreaker). Both use the OaatType that stands for the NAS: while
	// its pods exit 75 the NAS is down; an edit that makes them exit 0 brings it back.
	It("opens for both groups naming the lock, probes one at a time for both, and runs every item of both once the target is back", func(ctx SpecContext) {
		const target = "nas-backup"
		setup := support.NewSharedBreaker(ns, target)
		lock, lockName, groups := setup.Lock, setup.Lock.Name, setup.Items
		create(ctx, append([]client.Object{newOaatType(target, "1s", support.SharedBreakerExitCode)}, setup.Objects...)...)
		getLock := func(g Gomega) *v1alpha1.OaatLock {
			got := &v1alpha1.OaatLock{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lock), got)).To(Succeed())
			return got
		}

		By("opening the lock's breaker once two items of a group failed, and both groups' with it")
		var openedAt time.Time
		Eventually(func(g Gomega) {
			cb := getLock(g).Status.CircuitBreaker
			g.Expect(cb).To(HaveField("State", v1alpha1.BreakerOpen))
			g.Expect(cb.OpenedBy).To(BeElementOf(ns+"/photos", ns+"/music"))
			g.Expect(cb.LastFailureExitCode).To(HaveValue(BeEquivalentTo(support.SharedBreakerExitCode)))
			openedAt = cb.OpenedAt.Time
			for name := range groups {
				group := getGroup(ctx, g, name)
				g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerOpen), "group %s", name)
				expectCondition(g, group, v1alpha1.ConditionTargetAvailable, metav1.ConditionFalse, v1alpha1.ReasonBreakerOpen)
			}
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		token := mintToken(ctx, monitoringNamespace, prometheusSA)
		openSeries := fmt.Sprintf(`oaat_lock_circuit_breaker_open{lock=%q,namespace=%q} 1`, lockName, ns)
		Eventually(func(g Gomega) {
			_, body, err := scrapeOperator(ctx, token)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(body).To(ContainSubstring(openSeries))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("probing for both groups, one at a time, with no item's failure count growing")
		Eventually(func(g Gomega) {
			g.Expect(getLock(g).Status.CircuitBreaker.FailedProbes).To(BeNumerically(">=", 3))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		for name, items := range groups {
			group := getGroup(ctx, Default, name)
			for _, item := range items {
				Expect(itemOf(Default, group, item).FailureCount).To(BeNumerically("<=", 1), "group %s item %s", name, item)
			}
		}

		By("bringing the target back: the next probe closes the lock's breaker and both groups'")
		recovered := time.Now()
		updateType(ctx, target, func(t *v1alpha1.OaatType) { t.Spec.Template.Annotations[annotationTestExitCode] = "0" })
		Eventually(func(g Gomega) {
			cb := getLock(g).Status.CircuitBreaker
			g.Expect(cb).To(HaveField("State", v1alpha1.BreakerClosed))
			g.Expect(cb.ClosedBy).To(BeElementOf(ns+"/photos", ns+"/music"))
			for name := range groups {
				group := getGroup(ctx, g, name)
				g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerClosed), "group %s", name)
				expectCondition(g, group, v1alpha1.ConditionTargetAvailable, metav1.ConditionTrue, v1alpha1.ReasonBreakerClosed)
			}
		}).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())

		By("running every item of both groups within a minute of the recovery, with no failure count left")
		Eventually(func(g Gomega) {
			setup.ExpectRecovered(g, func(g Gomega, name string) *v1alpha1.OaatGroup { return getGroup(ctx, g, name) })
		}).WithContext(ctx).WithTimeout(time.Minute - time.Since(recovered)).Should(Succeed())
		GinkgoWriter.Printf("Every item of both groups succeeded %s after the recovery\n", time.Since(recovered).Round(time.Second))

		By("having run the probes one at a time: no pod of either group beside a probe's")
		// The probes are the pods created after the opening's second up to the one that closed the
		// breaker (support.Probes): each alone while it lived. The tracker sees a pod's end up to a
		// few hundred milliseconds late, and two probes beside each other would overlap by their
		// whole run (1s): an overlap counts from half a second.
		probePods, beside := setup.Probes(tracker, openedAt.Add(time.Second), overlapSlack)
		Expect(beside).To(BeEmpty())
		probes := len(probePods)
		// Three probes failed: the first may be a run of the other group that was under way when the
		// breaker opened, and the next may start in the opening's second, so at least one failed
		// probe is created after it, and one closed the breaker.
		Expect(probes).To(BeNumerically(">=", 2), "probes: a failed one and the one that closed the breaker")
		GinkgoWriter.Printf("%d probes ran, one at a time, while the lock's breaker was open\n", probes)

		By("sending one event on the lock when it opened and one when it closed")
		expectLockEvents(ctx, lockName)
	}, SpecTimeout(2*time.Minute))
})

// overlapSlack is how long two pods may seem to overlap, as the tracker sees their ends late.
const overlapSlack = 500 * time.Millisecond

// expectLockEvents checks that the test namespace's OaatLock got one BreakerOpened and one
// BreakerClosed event; the recorder sends them in the background, after the status writes.
func expectLockEvents(ctx context.Context, lock string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		list, err := clientset.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		count := map[string]int{}
		for _, e := range list.Items {
			if e.Regarding.Kind == "OaatLock" && e.Regarding.Name == lock {
				count[e.Reason]++
			}
		}
		g.Expect(count).To(HaveKeyWithValue(string(v1alpha1.ReasonBreakerOpened), 1))
		g.Expect(count).To(HaveKeyWithValue(string(v1alpha1.ReasonBreakerClosed), 1))
	}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
}
