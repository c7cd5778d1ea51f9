package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
)

// refusalWait is the manager's --history-refusal-wait in this spec: long enough to restart the
// manager in its middle, short enough for the suite.
const refusalWait = 30 * time.Second

var _ = Describe("A deleted group whose history the API server refuses", func() {
	It("goes without it once the refusal has lasted --history-refusal-wait, across a manager restart, with a Warning event", func(ctx SpecContext) {
		stopManager()
		stopManager = startManagerWith(managerOptions{historyRefusalWait: refusalWait})
		group := coolingGroup("backups", "a")
		group.Spec.Suspend = true
		create(ctx, newOaatType(typeName), group)
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "backups").Finalizers).To(ContainElement(v1alpha1.FinalizerHistory))
		}).WithContext(ctx).Should(Succeed())

		By("allowing no OaatGroupHistory in the namespace (a ResourceQuota of 0)")
		quotaName := corev1.ResourceName("count/oaatgrouphistories.oaat.io")
		none := corev1.ResourceList{quotaName: resource.MustParse("0")}
		quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-history"}, Spec: corev1.ResourceQuotaSpec{Hard: none}}
		create(ctx, quota)
		// No quota controller runs here: the quota's usage is written as it would write it, which
		// the quota admission needs before it admits or refuses anything.
		quota.Status = corev1.ResourceQuotaStatus{Hard: none, Used: none}
		Expect(k8sClient.Status().Update(ctx, quota)).To(Succeed())

		By("kubectl delete of the group, which waits for it to be gone")
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(os.WriteFile(kubeconfig, testEnv.KubeConfig, 0o600)).To(Succeed())
		deleted := make(chan error, 1)
		var out []byte
		go func() {
			defer GinkgoRecover()
			var err error
			out, err = exec.CommandContext(ctx, os.Getenv("TEST_ASSET_KUBECTL"), "--kubeconfig", kubeconfig,
				"delete", "oaatgroup", "backups", "-n", ns, "--timeout=2m").CombinedOutput()
			deleted <- err
		}()
		var since time.Time
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(getGroup(ctx, g, "backups").Status.Conditions, v1alpha1.ConditionHistoryKept)
			g.Expect(c).NotTo(BeNil(), "no condition %s", v1alpha1.ConditionHistoryKept)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(string(v1alpha1.ReasonHistoryRefused)))
			g.Expect(c.Message).To(ContainSubstring("exceeded quota"))
			since = c.LastTransitionTime.Time
		}).WithContext(ctx).Should(Succeed())

		By("restarting the manager in the middle of the wait")
		time.Sleep(time.Until(since.Add(refusalWait / 2)))
		stopManager()
		restarted := time.Now()
		stopManager = startManagerWith(managerOptions{historyRefusalWait: refusalWait})

		var err error
		Eventually(deleted, refusalWait+30*time.Second).Should(Receive(&err))
		gone := time.Now()
		AddReportEntry("history refusal", fmt.Sprintf("the wait began at %s, the manager restarted %s after it, the group went %s after it (wait %s)",
			since.Format(time.RFC3339), restarted.Sub(since).Round(100*time.Millisecond), gone.Sub(since).Round(100*time.Millisecond), refusalWait))
		Expect(err).NotTo(HaveOccurred(), "kubectl delete: %s", string(out))
		Expect(string(out)).To(ContainSubstring(`oaatgroup.oaat.io "backups" deleted`))
		// The wait ends at since + refusalWait (since is in whole seconds): the new manager went on
		// with the stored wait rather than start one of its own, which would end after
		// restarted + refusalWait.
		Expect(gone).To(BeTemporally(">=", since.Add(refusalWait-time.Second)), "the group went before the wait's end")
		Expect(gone).To(BeTemporally("<", since.Add(refusalWait+8*time.Second)), "the group went long after the wait's end")
		Expect(gone).To(BeTemporally("<", restarted.Add(refusalWait)), "the restarted manager started the wait again")

		expectEvent(ctx, "backups", corev1.EventTypeWarning, v1alpha1.ReasonHistoryLost)
		Expect(groupEvents(ctx, Default, "backups", v1alpha1.ReasonHistoryLost)[0].Note).To(ContainSubstring("exceeded quota"))
		expectNoRecord(ctx, Default, ns, "backups")
		Expect(metricValue(Default, "oaat_group_histories_lost_total", map[string]string{"namespace": ns, "reason": history.LostRefused})).To(Equal(1.0))
	}, SpecTimeout(2*specTimeout))
})
