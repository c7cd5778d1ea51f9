//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

var _ = Describe("The circuit breaker", func() {
	// The OaatType stands for the target: while its pods exit 75 the target is down; an edit
	// that makes them exit 0 brings it back.
	It("opens when the shared target is down, probes one at a time on its schedule, and runs every item once it is back", func(ctx SpecContext) {
		const name = "breaker-nas"
		group := newGroup(name, "breaker-target", "a", "b", "c", "d")
		group.Spec.FailureCoolOff = "1h"
		group.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{
			ConsecutiveItemFailures: 3, ExitCodes: []int32{75}, ProbeInterval: "2s", MaxProbeInterval: "4s",
		}
		create(ctx, newOaatType("breaker-target", "1s", 75), group)

		By("opening after three distinct items failed, with one event")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerOpen))
			g.Expect(group.Status.CircuitBreaker.FailedItems).To(HaveLen(3))
			expectCondition(g, group, v1alpha1.ConditionTargetAvailable, metav1.ConditionFalse, v1alpha1.ReasonBreakerOpen)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("probing one item at a time, 2s then 4s after each failure, with no item's failure count growing")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			g.Expect(group.Status.CircuitBreaker.FailedProbes).To(BeNumerically(">=", 3))
			for _, it := range group.Status.Items {
				g.Expect(it.FailureCount).To(BeNumerically("<=", 1), "item %s", it.Name)
			}
		}).WithContext(ctx).WithTimeout(40 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		recs := tracker.PodsOf(ns, name)
		Expect(len(recs)).To(BeNumerically(">=", 6))
		// Pods 4, 5 and 6 are the first three probes: each starts its wait (2s, 4s, 4s) after the
		// run before it ended (the tracker sees an end up to a few hundred milliseconds late).
		for i, wait := range []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second} {
			before, probe := recs[i+2], recs[i+3]
			Expect(before.Ended).NotTo(BeZero())
			gap := probe.Created.Sub(before.Ended)
			Expect(gap).To(BeNumerically(">=", wait-time.Second), "probe %s started %s after %s ended", probe.Name, gap, before.Name)
		}
		Expect(groupEvents(ctx, Default, name, v1alpha1.ReasonBreakerOpened)).To(HaveLen(1))

		By("bringing the target back: the next probe closes the breaker and every item runs at once")
		updateType(ctx, "breaker-target", func(t *v1alpha1.OaatType) { t.Spec.Template.Annotations[annotationTestExitCode] = "0" })
		var closedAt time.Time
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerClosed))
			g.Expect(group.Status.CircuitBreaker.ClosedAt).NotTo(BeNil())
			closedAt = group.Status.CircuitBreaker.ClosedAt.Time
			expectCondition(g, group, v1alpha1.ConditionTargetAvailable, metav1.ConditionTrue, v1alpha1.ReasonBreakerClosed)
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			for _, item := range []string{"a", "b", "c", "d"} {
				it := itemOf(g, group, item)
				g.Expect(it.LastSuccess).NotTo(BeNil(), "item %s", item)
				g.Expect(it.FailureCount).To(BeZero(), "item %s", item)
			}
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		// After the closing probe, the three other items ran back to back: each pod started
		// within 2s of the end of the one before, though each item's failure cool-off is 1h.
		recs = tracker.PodsOf(ns, name)
		var after []support.PodRecord
		for _, r := range recs {
			if !r.Created.Time.Before(closedAt) {
				after = append(after, r)
			}
		}
		Expect(after).To(HaveLen(3), "pods after the breaker closed: %v", itemsOf(after))
		Expect(after[0].Created.Sub(closedAt)).To(BeNumerically("<", 2*time.Second))
		for i := 1; i < len(after); i++ {
			Expect(after[i].Created.Sub(after[i-1].Ended)).To(BeNumerically("<", 2*time.Second), "pod %s", after[i].Name)
		}
		Expect(groupEvents(ctx, Default, name, v1alpha1.ReasonBreakerClosed)).To(HaveLen(1))
	}, SpecTimeout(2*time.Minute))
})
