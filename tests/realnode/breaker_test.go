//go:build realnode

package realnode

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// targetScript is a backup to a target that a ConfigMap says is up or down: the container reads
// the flag from its environment (the kubelet resolves it when it starts the container) and exits
// 75 (EX_TEMPFAIL, support.SharedBreakerExitCode) while the target is down.
const targetScript = `[ "$TARGET" = up ] || { echo "target is $TARGET"; exit 75; }; echo "backed up $1"`

var _ = Describe("The circuit breaker a lock carries, on the real node", func() {
	It("holds both groups naming the lock while a ConfigMap says their target is down, probes one at a time, and runs every item once it says up",
		SpecTimeout(4*time.Minute), func(ctx SpecContext) {
			setup := support.NewSharedBreaker(ns, "nas-backup")
			lock, groups := setup.Lock, setup.Items
			flag := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nas-state", Namespace: ns}, Data: map[string]string{"state": "down"}}
			backup := busybox("main", targetScript)
			backup.Env = []corev1.EnvVar{{Name: "TARGET", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: flag.Name}, Key: "state",
			}}}}
			create(ctx, append([]client.Object{flag, newType("nas-backup", corev1.PodSpec{Containers: []corev1.Container{backup}})}, setup.Objects...)...)
			lockBreaker := func(g Gomega) *v1alpha1.LockCircuitBreakerStatus {
				got := &v1alpha1.OaatLock{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lock), got)).To(Succeed())
				g.Expect(got.Status.CircuitBreaker).NotTo(BeNil(), "the lock's breaker status")
				return got.Status.CircuitBreaker
			}
			expectGroups := func(g Gomega, state v1alpha1.BreakerState, status metav1.ConditionStatus, reason v1alpha1.Reason) {
				for name := range groups {
					group := getGroup(ctx, g, name)
					g.Expect(group.Status.CircuitBreaker).To(HaveField("State", state), "group %s", name)
					cond := meta.FindStatusCondition(group.Status.Conditions, v1alpha1.ConditionTargetAvailable)
					g.Expect(cond).NotTo(BeNil(), "group %s condition %s", name, v1alpha1.ConditionTargetAvailable)
					g.Expect(cond.Status).To(Equal(status), "group %s", name)
					g.Expect(cond.Reason).To(Equal(string(reason)), "group %s", name)
				}
			}

			By("opening the lock's breaker on the processes' exit code 75, and both groups' with it")
			var openedAt time.Time
			Eventually(func(g Gomega) {
				cb := lockBreaker(g)
				g.Expect(cb.State).To(Equal(v1alpha1.BreakerOpen))
				g.Expect(cb.LastFailureExitCode).To(HaveValue(BeEquivalentTo(support.SharedBreakerExitCode)))
				openedAt = cb.OpenedAt.Time
				expectGroups(g, v1alpha1.BreakerOpen, metav1.ConditionFalse, v1alpha1.ReasonBreakerOpen)
			}).WithContext(ctx).WithTimeout(90 * time.Second).Should(Succeed())

			By("probing for both groups with no item's failure count growing")
			Eventually(func(g Gomega) {
				g.Expect(lockBreaker(g).FailedProbes).To(BeNumerically(">=", 3))
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
			for name, items := range groups {
				group := getGroup(ctx, Default, name)
				for _, item := range items {
					if it := support.ItemStatus(group, item); it != nil {
						Expect(it.FailureCount).To(BeNumerically("<=", 1), "group %s item %s", name, item)
					}
				}
			}

			By("saying up in the ConfigMap: the next probe's container reads it, succeeds and closes the breakers")
			flag.Data["state"] = "up"
			Expect(k8sClient.Update(ctx, flag)).To(Succeed())
			recovered := time.Now()
			Eventually(func(g Gomega) {
				g.Expect(lockBreaker(g).State).To(Equal(v1alpha1.BreakerClosed))
				expectGroups(g, v1alpha1.BreakerClosed, metav1.ConditionTrue, v1alpha1.ReasonBreakerClosed)
			}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())

			By("running every item of both groups within a minute of the recovery")
			Eventually(func(g Gomega) {
				setup.ExpectRecovered(g, func(g Gomega, name string) *v1alpha1.OaatGroup { return getGroup(ctx, g, name) })
			}).WithContext(ctx).WithTimeout(time.Minute - time.Since(recovered)).Should(Succeed())
			GinkgoWriter.Printf("Every item of both groups succeeded %s after the ConfigMap said up\n", time.Since(recovered).Round(time.Second))

			By("having run the probes one at a time: no pod of either group beside a probe's")
			// A real pod's end reaches the watcher up to a second or so late (the kubelet's status
			// update); two probes beside each other would overlap by their whole life (seconds). Of
			// the three failed probes, a run under way at the opening and a probe started in its
			// second may fall before openedAt's next second: at least one failed probe and the one
			// that closed the breaker remain.
			probes, beside := setup.Probes(tracker, openedAt.Add(time.Second), time.Second)
			Expect(beside).To(BeEmpty())
			Expect(len(probes)).To(BeNumerically(">=", 2), "probes: a failed one and the one that closed the breaker")
			GinkgoWriter.Printf("%d probes ran, one at a time, while the lock's breaker was open\n", len(probes))
		})
})
