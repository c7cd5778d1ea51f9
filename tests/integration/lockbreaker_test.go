package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

var _ = Describe("The circuit breaker a lock carries", func() {
	// Two groups write to one NAS, which their OaatLock (capacity 2) stands for and which carries
	// the breaker. The NAS goes down: two items of photos fail, its breaker opens and opens the
	// lock's; music, which has not failed, holds too; one probe at a time runs for both groups
	// (the lock gives one slot while open), on the shared schedule (2s, then 4s); no failure
	// count grows; the first successful probe closes the lock's breaker and both groups' items
	// start at once, two at a time again.
	It("opens for every group naming the lock, probes one at a time for all and closes for all on the first success", func(ctx SpecContext) {
		const lockName, photos, music = "nas", "photos", "music"
		breaker := func(g *v1alpha1.OaatGroup) *v1alpha1.OaatGroup {
			g.Spec.FailureCoolOff = "1h"
			g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{
				ConsecutiveItemFailures: 2, ExitCodes: []int32{75}, ProbeInterval: "2s", MaxProbeInterval: "4s",
			}
			return g
		}
		lock := newLock(lockName, 2)
		lock.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
		create(ctx, newOaatType(typeName), lock, breaker(lockedGroup(photos, []string{lockName}, "a", "b", "c")))

		By("failing two items of photos with the NAS's exit code")
		var previous []string
		for range 2 {
			pod := waitForLivePod(ctx, photos, previous...)
			markRunning(ctx, pod.Name)
			finishPod(ctx, pod.Name, 75, "Error")
			previous = append(previous, pod.Name)
		}

		By("opening the lock's breaker, recorded in its status, with one event on the lock")
		var nextProbe time.Time
		Eventually(func(g Gomega) {
			cb := getLock(ctx, g, lockName).Status.CircuitBreaker
			g.Expect(cb).NotTo(BeNil())
			g.Expect(cb.State).To(Equal(v1alpha1.BreakerOpen))
			g.Expect(cb.OpenedBy).To(Equal(ns + "/" + photos))
			g.Expect(cb.LastFailureExitCode).To(HaveValue(Equal(int32(75))))
			g.Expect(cb.NextProbeAt).NotTo(BeNil())
			nextProbe = cb.NextProbeAt.Time
		}).WithContext(ctx).Should(Succeed())
		lockLabels := map[string]string{"namespace": ns, "lock": lockName}
		Eventually(func(g Gomega) {
			g.Expect(metricValue(g, "oaat_lock_circuit_breaker_open", lockLabels)).To(Equal(1.0))
		}).WithContext(ctx).Should(Succeed())

		By("holding music, which names the lock and has not failed: its breaker opens on the lock's schedule")
		create(ctx, breaker(lockedGroup(music, []string{lockName}, "x", "y")))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, music)
			g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerOpen))
			g.Expect(group.Status.CircuitBreaker.NextProbeAt).To(HaveValue(HaveField("Time", BeTemporally("==", nextProbe))))
			expectCondition(g, group, v1alpha1.ConditionTargetAvailable, metav1.ConditionFalse, v1alpha1.ReasonBreakerOpen)
			g.Expect(condition(group, v1alpha1.ConditionTargetAvailable).Message).To(ContainSubstring("carried by OaatLock nas"))
			for _, item := range []string{"x", "y"} {
				g.Expect(itemStatus(group, item).WaitReason).To(Equal(v1alpha1.WaitBreakerOpen), "item %s", item)
			}
		}).WithContext(ctx).Should(Succeed())

		By("running one probe, of either group, at the lock's nextProbeAt, and no second one beside it")
		probe, probeFailed := runSharedProbe(ctx, nextProbe, previous, 75, "Error")
		previous = append(previous, probe.Name)

		By("recording the failed probe for both groups and the lock, without growing any item's failure count")
		Eventually(func(g Gomega) {
			cb := getLock(ctx, g, lockName).Status.CircuitBreaker
			g.Expect(cb.State).To(Equal(v1alpha1.BreakerOpen))
			g.Expect(cb.FailedProbes).To(Equal(int32(1)))
			g.Expect(cb.NextProbeAt.Time).To(BeTemporally("==", probeFailed.Add(4*time.Second)))
			nextProbe = cb.NextProbeAt.Time
			for _, name := range []string{photos, music} {
				group := getGroup(ctx, g, name)
				g.Expect(group.Status.CurrentRun).To(BeNil())
				g.Expect(group.Status.CircuitBreaker.State).To(Equal(v1alpha1.BreakerOpen), "group %s", name)
				g.Expect(group.Status.CircuitBreaker.NextProbeAt.Time).To(BeTemporally("==", nextProbe), "group %s", name)
				for _, it := range group.Status.Items {
					g.Expect(it.FailureCount).To(BeNumerically("<=", 1), "group %s item %s", name, it.Name)
				}
			}
			g.Expect(failureCounts(getGroup(ctx, g, photos))).To(Equal(int32(2)))
			g.Expect(failureCounts(getGroup(ctx, g, music))).To(BeZero())
		}).WithContext(ctx).Should(Succeed())

		By("running the second probe, one at a time, at its time, which succeeds")
		probe, closedAt := runSharedProbe(ctx, nextProbe, previous, 0, "Completed")
		previous = append(previous, probe.Name)

		By("closing the lock's breaker and both groups', with one event on the lock")
		Eventually(func(g Gomega) {
			cb := getLock(ctx, g, lockName).Status.CircuitBreaker
			g.Expect(cb.State).To(Equal(v1alpha1.BreakerClosed))
			g.Expect(cb.ClosedBy).To(Equal(ns + "/" + probe.Labels[v1alpha1.LabelGroup]))
			for _, name := range []string{photos, music} {
				g.Expect(getGroup(ctx, g, name).Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerClosed), "group %s", name)
			}
		}).WithContext(ctx).Should(Succeed())

		By("starting both groups' items at once, two at a time again, though photos' failed items are in their 1h cool-off")
		// At once: within 6 s, against a cool-off of 1h. The two groups race for the lock's slots
		// when the breaker closes; the loser tries again after the conflict retry (2 s), and a
		// pod's creationTimestamp is in whole seconds (the spec failed at 3 s on a loaded machine).
		Eventually(func(g Gomega) {
			for _, name := range []string{photos, music} {
				live, err := livePodsOf(ctx, name)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(podNames(live)).To(HaveLen(1), "live pods of group %s", name)
				g.Expect(previous).NotTo(ContainElement(live[0].Name))
				g.Expect(live[0].CreationTimestamp.Time).To(BeTemporally("<", closedAt.Add(6*time.Second)))
			}
		}).WithContext(ctx).WithTimeout(6 * time.Second).Should(Succeed())

		By("sending one event on the lock for the opening and one for the closing")
		Eventually(func(g Gomega) {
			g.Expect(occurrences(eventsAbout(ctx, g, "OaatLock", lockName, v1alpha1.ReasonBreakerOpened))).To(Equal(1))
			g.Expect(occurrences(eventsAbout(ctx, g, "OaatLock", lockName, v1alpha1.ReasonBreakerClosed))).To(Equal(1))
			g.Expect(metricValue(g, "oaat_lock_circuit_breaker_open", lockLabels)).To(Equal(0.0))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))

	// A ClusterOaatLock carries the breaker for groups of two namespaces. Its events, as those of
	// any cluster-scoped object sent by client-go's event recorder, are in namespace default.
	It("opens and closes for the groups of every namespace naming a ClusterOaatLock, with its events in namespace default", func(ctx SpecContext) {
		labelNamespace(ctx, ns, "backup")
		second := sharingNamespace(ctx, "backup")
		lock := newClusterLock(ctx, 2)
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			l := &v1alpha1.ClusterOaatLock{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(lock), l); err != nil {
				return err
			}
			l.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
			return k8sClient.Update(ctx, l)
		})).To(Succeed())
		group := support.Group(ns, "backups", typeName, "a", "b").ClusterLocks(lock.Name).Obj()
		group.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 2, ProbeInterval: "2s", MaxProbeInterval: "4s"}
		create(ctx, newOaatType(typeName), group)

		By("failing two items of the group of the test's namespace")
		var previous []string
		for range 2 {
			pod := waitForLivePod(ctx, group.Name, previous...)
			markRunning(ctx, pod.Name)
			finishPod(ctx, pod.Name, 75, "Error")
			previous = append(previous, pod.Name)
		}
		Eventually(func(g Gomega) {
			cb := getClusterLock(ctx, g, lock.Name).Status.CircuitBreaker
			g.Expect(cb).To(HaveField("State", v1alpha1.BreakerOpen))
			g.Expect(cb.OpenedBy).To(Equal(ns + "/" + group.Name))
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, group.Name, corev1.EventTypeWarning, v1alpha1.ReasonBreakerOpened)

		By("holding the group of the other namespace, which has no breaker of its own")
		clusterLockedGroup(ctx, second, lock.Name, "x")
		inNamespace(second, func() {
			Eventually(func(g Gomega) {
				other := getGroup(ctx, g, "backups")
				g.Expect(other.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerOpen))
				expectCondition(g, other, v1alpha1.ConditionTargetAvailable, metav1.ConditionFalse, v1alpha1.ReasonBreakerOpen)
				g.Expect(condition(other, v1alpha1.ConditionTargetAvailable).Message).To(ContainSubstring("carried by ClusterOaatLock " + lock.Name))
			}).WithContext(ctx).Should(Succeed())
		})

		By("closing it for both namespaces on the first successful probe")
		var probe corev1.Pod
		Eventually(func(g Gomega) {
			live := liveIn(ctx, g, ns, second)
			g.Expect(podNames(live)).To(HaveLen(1))
			g.Expect(previous).NotTo(ContainElement(live[0].Name))
			probe = live[0]
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		inNamespace(probe.Namespace, func() {
			markRunning(ctx, probe.Name)
			finishPod(ctx, probe.Name, 0, "Completed")
		})
		Eventually(func(g Gomega) {
			g.Expect(getClusterLock(ctx, g, lock.Name).Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerClosed))
			for _, namespace := range []string{ns, second} {
				inNamespace(namespace, func() {
					g.Expect(getGroup(ctx, g, "backups").Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerClosed), "namespace %s", namespace)
				})
			}
		}).WithContext(ctx).Should(Succeed())

		By("sending the lock's two events in namespace default, none in the groups' namespaces")
		Eventually(func(g Gomega) {
			inNamespace(metav1.NamespaceDefault, func() {
				g.Expect(occurrences(eventsAbout(ctx, g, v1alpha1.KindClusterOaatLock, lock.Name, v1alpha1.ReasonBreakerOpened))).To(Equal(1))
				g.Expect(occurrences(eventsAbout(ctx, g, v1alpha1.KindClusterOaatLock, lock.Name, v1alpha1.ReasonBreakerClosed))).To(Equal(1))
			})
		}).WithContext(ctx).Should(Succeed())
		for _, namespace := range []string{ns, second} {
			inNamespace(namespace, func() {
				for _, reason := range []v1alpha1.Reason{v1alpha1.ReasonBreakerOpened, v1alpha1.ReasonBreakerClosed} {
					Expect(eventsAbout(ctx, Default, v1alpha1.KindClusterOaatLock, lock.Name, reason)).To(BeEmpty(), "namespace %s", namespace)
				}
			})
		}
	}, SpecTimeout(specTimeout))
})

// runSharedProbe checks that no pod of photos or music starts before nextProbe, that one starts
// after it and no second one beside it while it runs, then ends it with exitCode and reason. It
// returns the probe's pod and when it ended.
func runSharedProbe(ctx context.Context, nextProbe time.Time, previous []string, exitCode int32, reason string) (*corev1.Pod, metav1.Time) {
	GinkgoHelper()
	Consistently(func(g Gomega) {
		g.Expect(sharedLive(ctx, g)).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(time.Until(nextProbe) - 300*time.Millisecond).Should(Succeed())
	var probe corev1.Pod
	Eventually(func(g Gomega) {
		live := sharedLive(ctx, g)
		g.Expect(podNames(live)).To(HaveLen(1))
		g.Expect(previous).NotTo(ContainElement(live[0].Name))
		probe = live[0]
	}).WithContext(ctx).WithTimeout(7 * time.Second).Should(Succeed())
	Expect(probe.CreationTimestamp.Time).NotTo(BeTemporally("<", nextProbe))
	markRunning(ctx, probe.Name)
	Consistently(func(g Gomega) {
		g.Expect(podNames(sharedLive(ctx, g))).To(ConsistOf(probe.Name))
	}).WithContext(ctx).WithTimeout(1500 * time.Millisecond).Should(Succeed())
	return &probe, finishPod(ctx, probe.Name, exitCode, reason)
}

// sharedLive are the live pods of photos and music.
func sharedLive(ctx context.Context, g Gomega) []corev1.Pod {
	var all []corev1.Pod
	for _, name := range []string{"photos", "music"} {
		live, err := livePodsOf(ctx, name)
		g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
		all = append(all, live...)
	}
	return all
}

// failureCounts is the sum of the failure counts of the group's items.
func failureCounts(group *v1alpha1.OaatGroup) int32 {
	var n int32
	for _, it := range group.Status.Items {
		n += it.FailureCount
	}
	return n
}
