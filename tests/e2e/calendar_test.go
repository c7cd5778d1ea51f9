//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("A calendar schedule", func() {
	It("runs each item once per tick of a minutely schedule, one at a time", Label("floor"), SpecTimeout(4*time.Minute), func(ctx SpecContext) {
		group := newGroup("minutely", "quick", "a", "b", "c")
		group.Spec.Frequency, group.Spec.Schedule = "", "* * * * *"
		create(ctx, newOaatType("quick", "1s", 0), group)

		// roundDone waits for a round after the one that started at after (any, when zero) in which
		// every item succeeded, and returns its start.
		roundDone := func(after time.Time) time.Time {
			GinkgoHelper()
			var started time.Time
			Eventually(func(g Gomega) {
				st := getGroup(ctx, g, "minutely").Status
				g.Expect(st.RoundStartedAt).NotTo(BeNil())
				g.Expect(st.RoundStartedAt.Time.After(after)).To(BeTrue(), "round of %s", st.RoundStartedAt)
				g.Expect(st.CurrentRun).To(BeNil())
				for _, name := range []string{"a", "b", "c"} {
					it := itemOf(g, getGroup(ctx, g, "minutely"), name)
					g.Expect(it.LastSuccess).NotTo(BeNil(), "item %s", name)
					g.Expect(it.LastSuccess.Before(st.RoundStartedAt)).To(BeFalse(), "item %s", name)
					g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitNextTick), "item %s", name)
					g.Expect(it.NextEligibleAt).To(Equal(st.NextRoundAt), "item %s", name)
				}
				started = st.RoundStartedAt.Time
			}).WithContext(ctx).WithTimeout(100 * time.Second).WithPolling(time.Second).Should(Succeed())
			return started
		}

		first := roundDone(time.Time{})
		Expect(first.Second()).To(BeZero(), "a round of a minutely schedule without jitter starts on the minute")
		Expect(tracker.PodsOf(ns, "minutely")).To(HaveLen(3), "pods of the first round")

		second := roundDone(first)
		Expect(second.Sub(first)).To(Equal(time.Minute))
		Expect(tracker.PodsOf(ns, "minutely")).To(HaveLen(6), "pods after the second round: each item once per tick")
		Expect(getGroup(ctx, Default, "minutely").Status.Conditions).NotTo(ContainElement(
			HaveField("Type", v1alpha1.ConditionRoundOverrun)), "no overrun of rounds that take seconds")
	})
})
