//go:build e2e

package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// notifyRuns is how many runs each phase of the CloudEvents spec measures.
const notifyRuns = 20

// The CloudEvents of a group's transitions, through the operator run as in production (a separate
// process, leader-elected): five items of 1 s runs that all fail, each cooling off 2 s, so that
// an item is always due and every run is a transition. The sink takes them; then it goes away
// mid-stream and the operator's leader is killed with it; a new leader takes over while the sink
// is still gone; the sink comes back. Every transition the group recorded reaches the sink at
// least once (duplicates counted and printed), and the runs go on as fast without the sink as
// with it (reaction p99 printed for both; a second more without the sink fails the spec).
var _ = Describe("CloudEvents to a group's sink", Serial, func() {
	It("delivers every transition at least once across the loss of the sink and of the leader, without slowing the runs", func(ctx SpecContext) {
		Expect(sink).NotTo(BeNil(), "a Serial spec runs on the first process, which holds the sink")
		Expect(sink.Start()).To(Succeed())
		DeferCleanup(sink.Stop)
		const name = "notified"
		group := newGroup(name, "fails-fast", "a", "b", "c", "d", "e")
		group.Spec.FailureCoolOff = "2s"
		group.Spec.Notify = &v1alpha1.Notify{Sink: sink.URL("/e2e"), Events: []v1alpha1.NotifyEvent{v1alpha1.NotifyRunFailed}}
		create(ctx, newOaatType("fails-fast", "1s", 1), group)

		runs := func() int { return len(tracker.PodsOf(ns, name)) }
		waitForRuns := func(n int) {
			GinkgoHelper()
			Eventually(runs).WithContext(ctx).WithTimeout(time.Duration(n) * 5 * time.Second).Should(BeNumerically(">=", n))
		}
		By("measuring the runs while the sink takes the events")
		waitForRuns(notifyRuns + 1)
		up := perfkit.Latencies(tracker.Reactions(ns, name))
		Eventually(func(g Gomega) {
			expectCondition(g, getGroup(ctx, g, name), v1alpha1.ConditionNotified, metav1.ConditionTrue, v1alpha1.ReasonSinksReached)
		}).WithContext(ctx).Should(Succeed())

		By("losing the sink, then the leader, mid-stream")
		Expect(sink.Stop()).To(Succeed())
		Eventually(func(g Gomega) {
			expectCondition(g, getGroup(ctx, g, name), v1alpha1.ConditionNotified, metav1.ConditionFalse, v1alpha1.ReasonSinkUnreachable)
		}).WithContext(ctx).Should(Succeed())
		killOperator()
		startOperator(ctx)
		waitForLeadership(ctx)

		By("measuring the runs while the sink is gone")
		from := runs()
		waitForRuns(from + notifyRuns + 1)
		down := perfkit.Latencies(tracker.Reactions(ns, name)[from:])

		By("delivering everything once the sink is back")
		Expect(sink.Start()).To(Succeed())
		var group2 *v1alpha1.OaatGroup
		Eventually(func(g Gomega) {
			group2 = getGroup(ctx, g, name)
			g.Expect(group2.Status.Notifications).NotTo(BeNil())
			g.Expect(group2.Status.Notifications.Pending).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		received := map[string]bool{}
		for _, e := range sink.Events() {
			received[e.ID] = true
		}
		out := group2.Status.Notifications
		var missing []string
		for seq := range out.Next {
			if id := fmt.Sprintf("%s/%d", group2.UID, seq); !received[id] {
				missing = append(missing, id)
			}
		}
		Expect(missing).To(BeEmpty(), "transitions the sink never received (of %d, %d dropped)", out.Next, out.Dropped)
		Expect(out.Dropped).To(BeZero())
		GinkgoWriter.Printf("CloudEvents: %d transitions, each received at least once, %d duplicates; reaction with the sink up %s, gone %s\n",
			out.Next, sink.Duplicates(), up.Summary(), down.Summary())
		AddReportEntry("CloudEvents reaction", fmt.Sprintf("sink up %s; gone %s", up.Summary(), down.Summary()))
		// The target (p99 gone within +10 % or +50 ms of up) is a measurement, printed
		// above and read from the run, not asserted: on two loaded cores the p99 of 20 samples
		// moves by more than 50 ms from run to run (seen: up 106 ms, gone 162 ms in a cold CI run
		// with other builds beside it). What is asserted is what a delivery on the reconcile path
		// would break: a run waiting for the sink (notify.Timeout, 5 s) or its backoff.
		Expect(down.Percentile(99)).To(BeNumerically("<", up.Percentile(99)+time.Second),
			"reaction p99 with the sink gone (%s) against up (%s): the runs waited for the sink", down.Summary(), up.Summary())
	})
})
