package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// A tick every minute of the real clock: the operator must wake at each tick by itself.
var _ = Describe("A group with a calendar schedule", func() {
	It("runs each item once per tick and waits for the next tick", SpecTimeout(4*time.Minute), func(ctx SpecContext) {
		group := newGroup("minutely", "a", "b")
		group.Spec.Frequency = ""
		group.Spec.Schedule = "* * * * *"
		create(ctx, newOaatType(typeName), group)

		By("waiting for the first tick after the group's creation")
		Eventually(func(g Gomega) {
			st := getGroup(ctx, g, "minutely").Status
			g.Expect(st.NextRoundAt).NotTo(BeNil())
			g.Expect(st.NextRoundAt.Time.Second()).To(BeZero())
		}).WithContext(ctx).Should(Succeed())

		runRound := func(round int) metav1.Time {
			GinkgoHelper()
			var started metav1.Time
			var previous []string
			for range 2 {
				pod := waitForLivePodWithin(ctx, 90*time.Second, "minutely", previous...)
				previous = append(previous, pod.Name)
				finishPod(ctx, pod.Name, 0, "Completed")
			}
			Eventually(func(g Gomega) {
				st := getGroup(ctx, g, "minutely").Status
				g.Expect(st.RunCount).To(Equal(int64(2*round)), "runs after round %d", round)
				g.Expect(st.CurrentRun).To(BeNil())
				g.Expect(st.RoundStartedAt).NotTo(BeNil())
				g.Expect(st.NextRoundAt).NotTo(BeNil())
				g.Expect(st.NextRoundAt.Sub(st.RoundStartedAt.Time)).To(Equal(time.Minute))
				for _, name := range []string{"a", "b"} {
					it := itemStatus(getGroup(ctx, g, "minutely"), name)
					g.Expect(it).NotTo(BeNil())
					g.Expect(it.LastSuccess.Before(st.RoundStartedAt)).To(BeFalse(), "item %s succeeded before the round", name)
					g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitNextTick))
					g.Expect(it.NextEligibleAt).To(Equal(st.NextRoundAt))
				}
				started = *st.RoundStartedAt
			}).WithContext(ctx).Should(Succeed())
			return started
		}

		By("running each item once in the first round")
		first := runRound(1)
		Expect(first.Time.Second()).To(BeZero())

		By("starting nothing more until the next tick")
		expectNoLivePod(ctx, "minutely", time.Until(first.Add(time.Minute))-2*time.Second)

		By("running each item once in the round of the next tick, woken by the tick alone")
		second := runRound(2)
		Expect(second.Sub(first.Time)).To(Equal(time.Minute))
		group = getGroup(ctx, Default, "minutely")
		Expect(condition(group, v1alpha1.ConditionRoundOverrun)).To(BeNil())
	})

	It("refuses a schedule out of range and an unknown time zone at admission, then accepts them fixed", func(ctx SpecContext) {
		group := newGroup("badcron", "a")
		group.Spec.Frequency = ""
		group.Spec.Schedule = "61 * * * *"
		expectRejected(ctx, group, `the minute field "61" is not valid: use numbers 0-59`)
		group.Spec.Schedule, group.Spec.ScheduleTimeZone = "@daily", "Mars/Olympus"
		expectRejected(ctx, group, `unknown time zone "Mars/Olympus"`)
		group.Spec.ScheduleTimeZone = "Europe/Berlin"
		create(ctx, newOaatType(typeName), group)
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "badcron")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
			g.Expect(group.Status.NextRoundAt).NotTo(BeNil())
			g.Expect(itemStatus(group, "a").WaitReason).To(Equal(v1alpha1.WaitNextTick))
		}).WithContext(ctx).Should(Succeed())
	})
})

var _ = Describe("Admission of a calendar schedule", func() {
	DescribeTable("rejects an invalid schedule with a clear message",
		func(ctx SpecContext, mutate func(*v1alpha1.OaatGroupSpec), message string) {
			group := newGroup("invalid", "a")
			group.Spec.Frequency = ""
			mutate(&group.Spec)
			expectRejected(ctx, group, message)
		},
		Entry("schedule with frequency", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.Schedule, s.Frequency = "@daily", "1h" },
			"spec.schedule and spec.frequency cannot both be set"),
		Entry("not a cron expression", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.Schedule = "every night" },
			`"every night" is not a cron schedule: use five fields such as "0 1 * * *"`),
		Entry("six fields", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.Schedule = "0 0 1 * * *" },
			`"0 0 1 * * *" is not a cron schedule`),
		Entry("a time zone inside the expression", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.Schedule = "TZ=Europe/Berlin 0 1 * * *" },
			"the time zone goes in spec.scheduleTimeZone"),
		Entry("@every", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.Schedule = "@every 1h" },
			`"@every 1h" is not a cron schedule`),
		Entry("a time zone without a schedule", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.ScheduleTimeZone = "Europe/Berlin" },
			"spec.scheduleTimeZone needs spec.schedule"),
		Entry("a time zone that is not a name", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.Schedule, s.ScheduleTimeZone = "@daily", "../etc/passwd" },
			`spec.scheduleTimeZone: Invalid value: "../etc/passwd"`),
		Entry("jitter without a schedule", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.Jitter = "5m" },
			"spec.jitter needs spec.schedule"),
		Entry("a jitter that is not a duration", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.Schedule, s.Jitter = "@daily", "5 parsecs" },
			`"5 parsecs" is not a valid duration`),
		Entry("mode EachOnce with a schedule", SpecTimeout(specTimeout),
			func(s *v1alpha1.OaatGroupSpec) { s.Schedule, s.Mode = "@daily", v1alpha1.ModeEachOnce },
			"mode EachOnce cannot be used with spec.schedule"),
	)

	It("accepts the five-field and descriptor forms, and a group with neither frequency nor schedule", func(ctx SpecContext) {
		for i, schedule := range []v1alpha1.CronSchedule{"0 1 * * *", "*/15 2-4 1,15 Jan-Jun Mon-Fri", "@hourly", "@daily", "@weekly", "@monthly", "@yearly", ""} {
			group := newGroup("valid-"+string(rune('a'+i)), "a")
			group.Spec.Frequency, group.Spec.Schedule = "", schedule
			if schedule != "" {
				group.Spec.ScheduleTimeZone, group.Spec.Jitter = "America/New_York", "10m"
			}
			Expect(k8sClient.Create(ctx, group)).To(Succeed(), "schedule %q", schedule)
			Expect(group.Spec.Frequency).To(BeEmpty(), "frequency has no default in the CRD: schedule replaces it")
		}
	})
})
