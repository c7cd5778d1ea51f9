//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

var _ = Describe("Failure policies", func() {
	It("doubles a failing item's cool-off up to maxCoolOff", func(ctx SpecContext) {
		group := newGroup("backoff", "failing", "only")
		group.Spec.FailureCoolOff = "2s"
		group.Spec.Backoff = &v1alpha1.Backoff{Policy: v1alpha1.BackoffExponential, MaxCoolOff: "6s"}
		create(ctx, newOaatType("failing", "1s", 1), group)

		// The n-th failure waits 2s, 4s, then 6s (capped), as status says and as the pods show.
		wantCoolOff := map[int32]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 3: 6 * time.Second}
		seen := map[int32]bool{}
		Eventually(func(g Gomega) {
			it := itemOf(g, getGroup(ctx, g, "backoff"), "only")
			if want, ok := wantCoolOff[it.FailureCount]; ok && it.NextEligibleAt != nil && !seen[it.FailureCount] {
				g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitCoolingOff))
				g.Expect(it.NextEligibleAt.Sub(it.LastFailure.Time)).To(Equal(want), "cool-off after failure %d", it.FailureCount)
				seen[it.FailureCount] = true
			}
			g.Expect(seen).To(HaveLen(3))
		}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

		var recs []support.PodRecord
		Eventually(func(g Gomega) {
			recs = tracker.PodsOf(ns, "backoff")
			g.Expect(len(recs)).To(BeNumerically(">=", 4))
			g.Expect(recs[3].Ended).NotTo(BeZero())
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, 6 * time.Second} {
			gap := recs[i+1].Created.Sub(recs[i].Ended)
			Expect(gap).To(BeNumerically(">=", want-time.Second), "pod %s started %s after %s ended", recs[i+1].Name, gap, recs[i].Name)
		}
	}, SpecTimeout(90*time.Second))

	It("counts a success exit code as success and parks an item on a do-not-retry exit code until the spec changes",
		func(ctx SpecContext) {
			okGroup := newGroup("exit-three", "exits-3", "x")
			okGroup.Spec.ExitCodes = &v1alpha1.ExitCodes{Success: []int32{3}}
			parkGroup := newGroup("exit-four", "exits-4", "y")
			parkGroup.Spec.FailureCoolOff = "1s"
			parkGroup.Spec.ExitCodes = &v1alpha1.ExitCodes{DoNotRetry: []int32{4}}
			create(ctx, newOaatType("exits-3", "1s", 3), newOaatType("exits-4", "1s", 4), okGroup, parkGroup)

			Eventually(func(g Gomega) {
				x := itemOf(g, getGroup(ctx, g, "exit-three"), "x")
				g.Expect(x.LastSuccess).NotTo(BeNil(), "exit code 3 counts as success")
				g.Expect(x.LastFailure).To(BeNil())
				g.Expect(*x.LastExitCode).To(BeEquivalentTo(3))

				group := getGroup(ctx, g, "exit-four")
				y := itemOf(g, group, "y")
				g.Expect(y.FailureCount).To(BeEquivalentTo(1))
				g.Expect(y.WaitReason).To(Equal(v1alpha1.WaitParked))
				g.Expect(y.ParkedGeneration).To(Equal(group.Generation))
				expectCondition(g, group, v1alpha1.ConditionParked, metav1.ConditionTrue, v1alpha1.ReasonItemsParked)
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
			// The recorder sends events in the background: the status may be written first.
			Eventually(func(g Gomega) {
				g.Expect(groupEvents(ctx, g, "exit-four", v1alpha1.ReasonItemParked)).To(HaveLen(1))
			}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
			expectNoNewPod(ctx, "exit-four", 1, 4*time.Second)

			By("changing the spec, which releases the parked item")
			updateGroup(ctx, "exit-four", func(g *v1alpha1.OaatGroup) { g.Spec.Frequency = "2h" })
			Eventually(func(g Gomega) {
				g.Expect(tracker.PodsOf(ns, "exit-four")).To(HaveLen(2))
				g.Expect(itemOf(g, getGroup(ctx, g, "exit-four"), "y").FailureCount).To(BeEquivalentTo(2))
			}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		}, SpecTimeout(90*time.Second))

	It("stops a run that exceeds runTimeout, running or stuck Pending, as a DeadlineExceeded failure", func(ctx SpecContext) {
		stuck := newOaatType("unschedulable", "1s", 0)
		stuck.Spec.Template.Spec.NodeSelector = map[string]string{"oaat.io/no-such-node": "true"}
		hung := newGroup("hung", "slow", "only")
		pending := newGroup("pending", "unschedulable", "only")
		for _, g := range []*v1alpha1.OaatGroup{hung, pending} {
			g.Spec.RunTimeout = "3s"
			g.Spec.FailureCoolOff = "1h"
		}
		create(ctx, newOaatType("slow", "60s", 0), stuck, hung, pending)

		for _, name := range []string{"hung", "pending"} {
			Eventually(func(g Gomega) {
				group := getGroup(ctx, g, name)
				g.Expect(group.Status.CurrentRun).To(BeNil())
				it := itemOf(g, group, "only")
				g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonDeadlineExceeded)), "group %s", name)
				g.Expect(it.FailureCount).To(BeEquivalentTo(1))
				g.Expect(it.LastFailure.Sub(it.LastStarted.Time)).To(BeNumerically("~", 3*time.Second, 2*time.Second))
				g.Expect(podsOf(ctx, g, name)).To(BeEmpty(), "the stopped pod is deleted")
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
			Eventually(func(g Gomega) []eventsv1.Event {
				return groupEvents(ctx, g, name, v1alpha1.ReasonRunStopping)
			}).WithContext(ctx).WithTimeout(10 * time.Second).Should(HaveLen(1))
		}
	}, SpecTimeout(90*time.Second))

	It("stops a run that exceeds its item's learned timeout, an item with no kept run at learnedRunTimeout.max", func(ctx SpecContext) {
		learned := newGroup("learned", "slow-learned", "only")
		learned.Spec.LearnedRunTimeout = &v1alpha1.LearnedRunTimeout{Factor: 2, Min: "1s", Max: "3s"}
		learned.Spec.FailureCoolOff = "1h"
		create(ctx, newOaatType("slow-learned", "60s", 0), learned)

		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "learned")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			it := itemOf(g, group, "only")
			g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonDeadlineExceeded)))
			g.Expect(it.LastFailure.Sub(it.LastStarted.Time)).To(BeNumerically("~", 3*time.Second, 2*time.Second))
			g.Expect(it.RecentRunSeconds).To(HaveLen(1), "the stopped run is kept, and makes the next timeout")
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			events := groupEvents(ctx, g, "learned", v1alpha1.ReasonRunStopping)
			g.Expect(events).To(HaveLen(1))
			g.Expect(events[0].Note).To(ContainSubstring("it ran longer than its learned timeout 3s (spec.learnedRunTimeout.max: it has no kept run)"))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}, SpecTimeout(60*time.Second))

	It("lets an item's learned timeout follow its durations as they drift up: runs of 2 s, 5 s then 12 s, none stopped", func(ctx SpecContext) {
		// Factor 3: after runs of 2 s the timeout is 6 s, after one of 5 s 15 s, so a run of 12 s
		// passes where a fixed runTimeout set from the first runs (6 s) would have stopped it.
		drifting := newGroup("drifting", "drifting", "only")
		drifting.Spec.Frequency = "1s"
		drifting.Spec.LearnedRunTimeout = &v1alpha1.LearnedRunTimeout{Factor: 3, Min: "1s", Max: "1m"}
		create(ctx, newOaatType("drifting", "2s", 0), drifting)
		kept := func(n int) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				g.Expect(itemOf(g, getGroup(ctx, g, "drifting"), "only").RecentRunSeconds).To(HaveLen(n))
			}).WithContext(ctx).WithTimeout(40 * time.Second).Should(Succeed())
		}
		kept(2)
		updateType(ctx, "drifting", func(t *v1alpha1.OaatType) { t.Spec.Template.Annotations[annotationTestDuration] = "5s" })
		Eventually(func(g Gomega) {
			g.Expect(itemOf(g, getGroup(ctx, g, "drifting"), "only").RecentRunSeconds).To(ContainElement(BeNumerically("~", 5, 1)))
		}).WithContext(ctx).WithTimeout(40 * time.Second).Should(Succeed())
		updateType(ctx, "drifting", func(t *v1alpha1.OaatType) { t.Spec.Template.Annotations[annotationTestDuration] = "12s" })
		Eventually(func(g Gomega) {
			g.Expect(itemOf(g, getGroup(ctx, g, "drifting"), "only").RecentRunSeconds).To(ContainElement(BeNumerically("~", 12, 1)))
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		it := itemOf(Default, getGroup(ctx, Default, "drifting"), "only")
		Expect(it.LastFailure).To(BeNil(), "no run failed or was stopped")
		Expect(groupEvents(ctx, Default, "drifting", v1alpha1.ReasonRunStopping)).To(BeEmpty())
	}, SpecTimeout(2*time.Minute))
})
