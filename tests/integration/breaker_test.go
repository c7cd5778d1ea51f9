package integration

import (
	"context"
	"maps"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("The circuit breaker of a group", func() {
	// A target shared by four items goes down: three distinct items fail in a row and open the
	// breaker; no failure count grows after that; one probe at a time runs on the breaker's
	// schedule (2s, then 4s, the cap); the target comes back, the probe succeeds, the breaker
	// closes and the other items start at once, though their own cool-off (1h) has not ended.
	It("opens after K distinct failed items, probes one at a time and closes on the first success", func(ctx SpecContext) {
		const name = "nas"
		group := newGroup(name, "a", "b", "c", "d")
		group.Spec.FailureCoolOff = "1h"
		group.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{
			ConsecutiveItemFailures: 3, ExitCodes: []int32{75}, ProbeInterval: "2s", MaxProbeInterval: "4s",
		}
		create(ctx, newOaatType(typeName), group)
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerClosed))
			expectCondition(g, group, v1alpha1.ConditionTargetAvailable, metav1.ConditionTrue, v1alpha1.ReasonBreakerClosed)
		}).WithContext(ctx).Should(Succeed())

		By("failing three distinct items with the target's exit code")
		var previous, failed []string
		var openedBy metav1.Time
		for range 3 {
			pod := waitForLivePod(ctx, name, previous...)
			markRunning(ctx, pod.Name)
			openedBy = finishPod(ctx, pod.Name, 75, "Error")
			previous = append(previous, pod.Name)
			failed = append(failed, pod.Annotations[v1alpha1.AnnotationItem])
		}
		Expect(slices.Compact(slices.Sorted(slices.Values(failed)))).To(HaveLen(3), "distinct items failed: %v", failed)
		var fourth string
		for _, item := range []string{"a", "b", "c", "d"} {
			if !slices.Contains(failed, item) {
				fourth = item
			}
		}

		By("opening the breaker, with its condition and one event")
		var nextProbe time.Time
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			cb := group.Status.CircuitBreaker
			g.Expect(cb).NotTo(BeNil())
			g.Expect(cb.State).To(Equal(v1alpha1.BreakerOpen))
			g.Expect(cb.FailedItems).To(Equal(failed))
			g.Expect(cb.LastFailureExitCode).To(HaveValue(Equal(int32(75))))
			g.Expect(cb.NextProbeAt).NotTo(BeNil())
			g.Expect(cb.NextProbeAt.Time).To(BeTemporally("==", openedBy.Add(2*time.Second)))
			expectCondition(g, group, v1alpha1.ConditionTargetAvailable, metav1.ConditionFalse, v1alpha1.ReasonBreakerOpen)
			g.Expect(condition(group, v1alpha1.ConditionTargetAvailable).Message).To(ContainSubstring("exit code 75"))
			nextProbe = cb.NextProbeAt.Time
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, name, corev1.EventTypeWarning, v1alpha1.ReasonBreakerOpened)

		By("running the first probe, the item that never failed, only at nextProbeAt")
		probe, probeFailed := runProbe(ctx, name, nextProbe, previous, 75, "Error")
		Expect(probe.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, fourth))
		previous = append(previous, probe.Name)

		By("recording the failed probe without growing any item's failure count; the next waits twice as long")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			cb := group.Status.CircuitBreaker
			g.Expect(cb.State).To(Equal(v1alpha1.BreakerOpen))
			g.Expect(cb.FailedProbes).To(Equal(int32(1)))
			g.Expect(cb.NextProbeAt.Time).To(BeTemporally("==", probeFailed.Add(4*time.Second)))
			g.Expect(group.Status.CurrentRun).To(BeNil())
			expectFailureCounts(g, group, failed, fourth)
			g.Expect(itemStatus(group, fourth).LastFailure).To(BeNil())
			g.Expect(itemStatus(group, fourth).LastExitCode).To(HaveValue(Equal(int32(75))))
			nextProbe = cb.NextProbeAt.Time
		}).WithContext(ctx).Should(Succeed())

		By("running the second probe, one at a time, at its time: an item that opened the breaker, not probed yet")
		probe, closedAt := runProbe(ctx, name, nextProbe, previous, 0, "Completed")
		Expect(failed).To(ContainElement(probe.Annotations[v1alpha1.AnnotationItem]))
		previous = append(previous, probe.Name)

		By("closing the breaker on its success, with one event")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerClosed))
			expectCondition(g, group, v1alpha1.ConditionTargetAvailable, metav1.ConditionTrue, v1alpha1.ReasonBreakerClosed)
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, name, corev1.EventTypeNormal, v1alpha1.ReasonBreakerClosed)

		By("starting the other items at once, one after the other, in their 1h cool-off")
		for range 3 {
			pod := waitForLivePodWithin(ctx, 3*time.Second, name, previous...)
			Expect(pod.CreationTimestamp.Time).To(BeTemporally("<", closedAt.Add(3*time.Second)))
			markRunning(ctx, pod.Name)
			closedAt = finishPod(ctx, pod.Name, 0, "Completed")
			previous = append(previous, pod.Name)
		}
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			for _, item := range []string{"a", "b", "c", "d"} {
				g.Expect(itemStatus(group, item).LastSuccess).NotTo(BeNil(), "item %s", item)
				g.Expect(itemStatus(group, item).FailureCount).To(BeZero(), "item %s", item)
			}
		}).WithContext(ctx).Should(Succeed())

		By("sending one event for the opening and one for the closing, and counting the probes")
		expectOneEvent(ctx, name, v1alpha1.ReasonBreakerOpened)
		expectOneEvent(ctx, name, v1alpha1.ReasonBreakerClosed)
		groupLabels := map[string]string{"namespace": ns, "group": name}
		Eventually(func(g Gomega) {
			g.Expect(metricValue(g, "oaat_circuit_breaker_probes_total", withResult(groupLabels, "failed"))).To(Equal(1.0))
			g.Expect(metricValue(g, "oaat_circuit_breaker_probes_total", withResult(groupLabels, "succeeded"))).To(Equal(1.0))
			g.Expect(metricValue(g, "oaat_group_circuit_breaker_open", groupLabels)).To(Equal(0.0))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("closes when spec.circuitBreaker is removed, and the items' cool-offs apply again", func(ctx SpecContext) {
		const name = "bucket"
		previous, _ := openBreakerForAnHour(ctx, name)
		groupLabels := map[string]string{"namespace": ns, "group": name}
		Eventually(func(g Gomega) {
			g.Expect(metricValue(g, "oaat_group_circuit_breaker_open", groupLabels)).To(Equal(1.0))
		}).WithContext(ctx).Should(Succeed())
		expectNoLivePod(ctx, name, time.Second)

		By("removing spec.circuitBreaker: the breaker closes, its status and condition go")
		updateGroupSpec(ctx, name, func(spec *v1alpha1.OaatGroupSpec) { spec.CircuitBreaker = nil })
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation))
			g.Expect(group.Status.CircuitBreaker).To(BeNil())
			g.Expect(condition(group, v1alpha1.ConditionTargetAvailable)).To(BeNil())
		}).WithContext(ctx).Should(Succeed())
		expectOneEvent(ctx, name, v1alpha1.ReasonBreakerClosed)

		By("running the item that never failed; the two failed ones wait for their cool-off")
		pod := waitForLivePod(ctx, name, previous...)
		markRunning(ctx, pod.Name)
		finishPod(ctx, pod.Name, 0, "Completed")
		expectNoLivePod(ctx, name, 2*time.Second)
	}, SpecTimeout(specTimeout))

	It("runs an on-demand run while it is open, as a probe: a failed one grows no failure count, a successful one closes it", func(ctx SpecContext) {
		const name = "vault"
		previous, failed := openBreakerForAnHour(ctx, name)
		fresh := otherThan([]string{"a", "b", "c"}, failed)
		groupLabels := map[string]string{"namespace": ns, "group": name}

		By("running an OaatRun of a failed item at once, an hour before nextProbeAt; its failure grows no failure count")
		previous = append(previous, runOnDemand(ctx, "probe-1", name, failed[0], previous, 1, "Error"))
		expectOnDemandRun(ctx, "probe-1", v1alpha1.OaatRunFailed, "Error")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, name)
			g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerOpen))
			g.Expect(group.Status.CircuitBreaker.FailedProbes).To(Equal(int32(1)))
			g.Expect(itemStatus(group, failed[0]).FailureCount).To(Equal(int32(1)))
			g.Expect(metricValue(g, "oaat_circuit_breaker_probes_total", withResult(groupLabels, "failed"))).To(Equal(1.0))
		}).WithContext(ctx).Should(Succeed())
		expectNoLivePod(ctx, name, time.Second)

		By("running an OaatRun of the item that never ran, whose success closes the breaker; a failed item then runs at once, in its 1h cool-off")
		previous = append(previous, runOnDemand(ctx, "probe-2", name, fresh, previous, 0, "Completed"))
		expectOnDemandRun(ctx, "probe-2", v1alpha1.OaatRunSucceeded, "Completed")
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, name).Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerClosed))
			g.Expect(metricValue(g, "oaat_circuit_breaker_probes_total", withResult(groupLabels, "succeeded"))).To(Equal(1.0))
		}).WithContext(ctx).Should(Succeed())
		expectOneEvent(ctx, name, v1alpha1.ReasonBreakerClosed)
		next := waitForLivePodWithin(ctx, 3*time.Second, name, previous...)
		Expect(failed).To(ContainElement(next.Annotations[v1alpha1.AnnotationItem]))
	}, SpecTimeout(specTimeout))
})

// openBreakerForAnHour creates the group of items a, b and c, with a failure cool-off of 1h and a
// breaker opening on two failed items with a probe after 1h, fails two items and waits until the
// breaker is open. It returns the failed pods and their items.
func openBreakerForAnHour(ctx context.Context, name string) (pods, items []string) {
	GinkgoHelper()
	group := newGroup(name, "a", "b", "c")
	group.Spec.FailureCoolOff = "1h"
	group.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 2, ProbeInterval: "1h"}
	create(ctx, newOaatType(typeName), group)

	By("failing two items, which opens the breaker until the probe in 1h")
	for range 2 {
		pod := waitForLivePod(ctx, name, pods...)
		markRunning(ctx, pod.Name)
		finishPod(ctx, pod.Name, 1, "Error")
		pods = append(pods, pod.Name)
		items = append(items, pod.Annotations[v1alpha1.AnnotationItem])
	}
	Eventually(func(g Gomega) {
		g.Expect(getGroup(ctx, g, name).Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerOpen))
	}).WithContext(ctx).Should(Succeed())
	return pods, items
}

// runOnDemand creates the OaatRun of item of the group, waits for its pod, a pod not in previous,
// and ends it with exitCode and reason. It returns the pod's name.
func runOnDemand(ctx context.Context, run, group, item string, previous []string, exitCode int32, reason string) string {
	GinkgoHelper()
	create(ctx, newOnDemandRun(run, group, item))
	pod := waitForLivePod(ctx, group, previous...)
	Expect(pod.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationOaatRun, run))
	markRunning(ctx, pod.Name)
	finishPod(ctx, pod.Name, exitCode, reason)
	return pod.Name
}

// otherThan is the one item of items not in some.
func otherThan(items, some []string) string {
	GinkgoHelper()
	var rest []string
	for _, it := range items {
		if !slices.Contains(some, it) {
			rest = append(rest, it)
		}
	}
	Expect(rest).To(HaveLen(1))
	return rest[0]
}

// runProbe checks that no pod of the group starts before nextProbe and that the probe's does
// after it, then plays the probe's pod: running, then ended with exitCode and reason. It returns
// the pod and when it ended.
func runProbe(ctx context.Context, group string, nextProbe time.Time, previous []string, exitCode int32, reason string) (*corev1.Pod, metav1.Time) {
	GinkgoHelper()
	expectNoLivePod(ctx, group, time.Until(nextProbe)-300*time.Millisecond)
	probe := waitForLivePodWithin(ctx, 7*time.Second, group, previous...)
	Expect(probe.CreationTimestamp.Time).NotTo(BeTemporally("<", nextProbe))
	markRunning(ctx, probe.Name)
	return probe, finishPod(ctx, probe.Name, exitCode, reason)
}

// expectFailureCounts checks that the items that opened the breaker have one failure each and the
// probe's item none.
func expectFailureCounts(g Gomega, group *v1alpha1.OaatGroup, failed []string, probed string) {
	for _, item := range failed {
		g.ExpectWithOffset(1, itemStatus(group, item).FailureCount).To(Equal(int32(1)), "item %s", item)
	}
	g.ExpectWithOffset(1, itemStatus(group, probed).FailureCount).To(BeZero(), "item %s", probed)
}

// expectOneEvent checks that the group has exactly one occurrence of an event of that reason.
func expectOneEvent(ctx context.Context, group string, reason v1alpha1.Reason) {
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(occurrences(groupEvents(ctx, g, group, reason))).To(Equal(1), "%s events about group %s", reason, group)
	}).WithContext(ctx).Should(Succeed())
}

// withResult is labels with the result label too.
func withResult(labels map[string]string, result string) map[string]string {
	with := maps.Clone(labels)
	with["result"] = result
	return with
}
