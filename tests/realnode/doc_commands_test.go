//go:build realnode

package realnode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The blocks of the docs that need the real node, marked <!-- checked-by: tests/realnode NAME -->
// in their pages: docs/install.md's install from the release's files (which deploys the operator
// of the suite, release_test.go), with kustomize, and its checks after it, and the runbooks' commands that read an item pod's log (kubectl
// logs), which only a real kubelet serves. They run as a user's shell runs them
// (support.RunCheckedBlock), with kubectl and the kubectl oaat plugin on the PATH, their
// placeholders replaced by the test's namespace, group, item and pod.

// docBin returns a directory with kubectl and, when plugin, the kubectl-oaat plugin of the
// release (krew installed it from the release's archive): the PATH of the pages' commands.
func docBin(plugin bool) string {
	GinkgoHelper()
	bin, err := os.MkdirTemp("", "realnode-docs-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, bin)
	Expect(os.Symlink(os.Getenv("KUBECTL"), filepath.Join(bin, "kubectl"))).To(Succeed())
	if plugin {
		Expect(os.Symlink(releasedPlugin(), filepath.Join(bin, "kubectl-oaat"))).To(Succeed())
	}
	return bin
}

// runDocBlocks runs the blocks of the docs marked checked-by: tests/realnode name and returns
// what they printed.
func runDocBlocks(ctx context.Context, bin, name string, values map[string]string) string {
	GinkgoHelper()
	env := []string{"KUBECONFIG=" + adminKubeconfig, "PATH=" + bin + ":" + os.Getenv("PATH")}
	return runBlocks(ctx, repoRoot, env, name, values, func(b support.CheckedBlock, out string) {
		if pod := values["POD"]; pod != "" {
			Expect(out).To(ContainSubstring("backing up "+values["ITEM"]), "%s: the log of pod %s", b.Where(), pod)
		}
	})
}

// runBlocks runs the blocks of the docs marked checked-by: tests/realnode name in dir, with env
// added to the test's environment, logs each with what it printed, calls each (when not nil)
// with it, and returns all they printed.
func runBlocks(ctx context.Context, dir string, env []string, name string, values map[string]string,
	each func(b support.CheckedBlock, out string)) string {
	GinkgoHelper()
	blocks, err := support.CheckedBlocks(repoRoot, "tests/realnode", name)
	Expect(err).NotTo(HaveOccurred())
	var all strings.Builder
	for _, b := range blocks {
		out, err := support.RunCheckedBlock(ctx, dir, env, b, values)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("%s:\n%s%s\n", b.Where(), b.Text, out)
		all.WriteString(out)
		if each != nil {
			each(b, out)
		}
	}
	return all.String()
}

var _ = Describe("The runbooks' commands that read an item pod's log", func() {
	It("run as the pages show them, on the last pod of a failed (and parked) item, unpark it, and on the pod of a running one", func(ctx SpecContext) {
		bin := docBin(true)

		// With maxConsecutiveFailures 1 the failing item parks at its first failure: the runbook
		// OaatItemParked's commands read it, and its unpark runs it again.
		group := newGroup("docs", "docs", "failing")
		group.Spec.FailureCoolOff = "1h"
		group.Spec.MaxConsecutiveFailures = 1
		create(ctx, newType("docs", corev1.PodSpec{Containers: []corev1.Container{
			busybox("main", `echo "backing up $1"; [ "$1" != failing ] || exit 3; sleep 120`),
		}}), group)
		failed := waitForOutcome(ctx, group.Name, "failing", 2*time.Minute)
		Expect(failed.LastFailure).NotTo(BeNil())
		Expect(failed.LastPodName).NotTo(BeEmpty())
		Expect(failed.ParkedGeneration).NotTo(BeZero(), "item failing, failed once with maxConsecutiveFailures 1, is not parked")
		runDocBlocks(ctx, bin, "last-pod-logs", map[string]string{
			"NAMESPACE": ns, "GROUP": group.Name, "ITEM": "failing", "POD": failed.LastPodName,
		})

		// docs/runbooks/oaat-item-parked.md: unpark runs the item again (an OaatRun), which fails
		// again, its count still at the limit, and parks it again.
		out := runDocBlocks(ctx, bin, "unpark", map[string]string{"NAMESPACE": ns, "GROUP": group.Name, "ITEM": "failing"})
		Expect(out).To(MatchRegexp(`oaatrun\.oaat\.io/docs-[a-z0-9]{5} created`))
		Eventually(func(g Gomega) {
			runs := &v1alpha1.OaatRunList{}
			g.Expect(k8sClient.List(ctx, runs, client.InNamespace(ns))).To(Succeed())
			g.Expect(runs.Items).To(HaveLen(1))
			g.Expect(runs.Items[0].Spec.Item).To(Equal("failing"))
			g.Expect(runs.Items[0].Status.Phase).To(Equal(v1alpha1.OaatRunFailed))
			og := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(group), og)).To(Succeed())
			it := support.ItemStatus(og, "failing")
			g.Expect(it.FailureCount).To(Equal(int32(2)))
			g.Expect(it.ParkedGeneration).To(Equal(og.Generation))
			g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitParked))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())

		Eventually(func(g Gomega) {
			og := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(group), og)).To(Succeed())
			og.Spec.OaatItems = append(og.Spec.OaatItems, "long")
			g.Expect(k8sClient.Update(ctx, og)).To(Succeed())
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		var running string
		Eventually(func(g Gomega) {
			og := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(group), og)).To(Succeed())
			g.Expect(og.Status.CurrentRun).NotTo(BeNil())
			g.Expect(og.Status.CurrentRun.Item).To(Equal("long"))
			pod := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: og.Status.CurrentRun.PodName}, pod)).To(Succeed())
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
			running = pod.Name
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		// The pod prints its line when it starts.
		Eventually(func() string { return podLog(ctx, running, "main") }).WithContext(ctx).
			WithTimeout(30 * time.Second).Should(ContainSubstring("backing up long"))
		runDocBlocks(ctx, bin, "running-pod-logs", map[string]string{
			"NAMESPACE": ns, "GROUP": group.Name, "ITEM": "long", "POD": running,
		})
	})
})

var _ = Describe("docs/install.md's checks after the install", func() {
	It("find the CRDs and the operator, and the samples' group running in oaat-demo", func(ctx SpecContext) {
		namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "oaat-demo"}}
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, namespace))).To(Succeed())
			Eventually(func(g Gomega) {
				err := k8sClient.Get(ctx, client.ObjectKeyFromObject(namespace), &corev1.Namespace{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace oaat-demo still exists (%v)", err)
			}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		})
		out := runDocBlocks(ctx, docBin(false), "install-check", nil)
		crds, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(regexp.MustCompile(`(?m)^\S+\.oaat\.io\s`).FindAllString(out, -1)).To(HaveLen(len(crds)), "the CRDs kubectl get crd lists")
		Expect(out).To(MatchRegexp(`(?m)^deployment.apps/oaat-operator-controller-manager\s`))
		// READY True, RUNNING an item, as the page's comment says.
		Eventually(func(g Gomega) {
			og := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace.Name, Name: "testsimple"}, og)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(og.Status.Conditions, "Ready")).To(BeTrue(), "%+v", og.Status.Conditions)
			g.Expect(og.Status.CurrentRun).NotTo(BeNil())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		// The namespace enforces the restricted Pod Security Standard: a pod exists only once
		// admitted.
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(namespace), namespace)).To(Succeed())
		Expect(namespace.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(namespace.Name), client.MatchingLabels{v1alpha1.LabelGroup: "testsimple"})).To(Succeed())
			g.Expect(pods.Items).NotTo(BeEmpty(), "no item pod of testsimple admitted")
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	})
})

var _ = Describe("The runbook OaatOperatorDown's commands", func() {
	It("show the manager's Deployment, pods, their events and log in oaat-operator-system", func(ctx SpecContext) {
		out := runDocBlocks(ctx, docBin(false), "operator-down", nil)
		Expect(out).To(MatchRegexp(`(?m)^deployment.apps/`+operatorDeployment+`\s`), "kubectl get deployment,pods")
		Expect(out).To(MatchRegexp(`(?m)^pod/`+operatorDeployment+`-\S+\s+1/1\s+Running\s`), "kubectl get deployment,pods")
		Expect(out).To(MatchRegexp(`(?m)^Namespace:\s+`+operatorNamespace+`$`), "kubectl describe pods")
		// The manager's log is JSON, one object a line, and it logs a reconcile or a lease renewal
		// at least every few seconds.
		Expect(out).To(MatchRegexp(`(?m)^\{"level":`), "kubectl logs")
	})
})

var _ = Describe("docs/install.md's install from dist/install.yaml, its Prometheus objects and its uninstall", func() {
	It("install over the suite's install, add the ServiceMonitor and PrometheusRule, and remove everything", SpecTimeout(8*time.Minute), func(ctx SpecContext) {
		bin := docBin(false)
		kustomization := filepath.Join(repoRoot, "config", "manager", "kustomization.yaml")
		before, err := os.ReadFile(kustomization)
		Expect(err).NotTo(HaveOccurred())
		By("running make build-installer and applying dist/install.yaml")
		runDocBlocks(ctx, bin, "install-dist", nil)
		after, err := os.ReadFile(kustomization)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(after)).To(Equal(string(before)), "make build-installer with the committed image changed config/manager")
		waitForOperator(ctx)

		By("adding the Prometheus Operator's CRDs, which the page takes as given, then the ServiceMonitor and the PrometheusRule")
		crdsDir := os.Getenv("MONITORING_CRDS_DIR")
		Expect(crdsDir).NotTo(BeEmpty(), "MONITORING_CRDS_DIR: run this suite with make test-realnode")
		apply := []string{"apply", "--server-side", "--field-manager=realnode-test"}
		wait := []string{"wait", "--for=condition=Established", "--timeout=60s"}
		for _, f := range support.MonitoringCRDFiles {
			apply = append(apply, "-f", filepath.Join(crdsDir, f))
			wait = append(wait, "-f", filepath.Join(crdsDir, f))
		}
		adminKubectl(ctx, apply...)
		DeferCleanup(func(ctx SpecContext) {
			adminKubectl(ctx, append([]string{"delete", "--ignore-not-found"}, apply[3:]...)...)
		})
		adminKubectl(ctx, wait...)
		runDocBlocks(ctx, bin, "install-prometheus", nil)
		out := adminKubectl(ctx, "-n", operatorNamespace, "get", "servicemonitor,prometheusrule", "-o", "name")
		Expect(strings.Fields(out)).To(ConsistOf(
			"servicemonitor.monitoring.coreos.com/oaat-operator-controller-manager-metrics-monitor",
			"prometheusrule.monitoring.coreos.com/oaat-operator-controller-manager-alerts"))

		By("uninstalling as the page says; the suite's install is restored after")
		DeferCleanup(func(ctx SpecContext) {
			runDocBlocks(ctx, bin, "install-kustomize", nil)
			waitForOperator(ctx)
			// The suite's install, the release's, with its operator image named by digest.
			runReleaseBlocks(ctx, bin, "install-release")
			waitForOperator(ctx)
		}, NodeTimeout(6*time.Minute))
		runDocBlocks(ctx, bin, "uninstall", nil)
		Eventually(func(g Gomega) {
			g.Expect(adminKubectl(ctx, "get", "crd", "-o", "name")).NotTo(ContainSubstring(".oaat.io"), "CRDs left")
			err := k8sClient.Get(ctx, client.ObjectKey{Name: operatorNamespace}, &corev1.Namespace{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s still exists (%v)", operatorNamespace, err)
			g.Expect(adminKubectl(ctx, "get", "clusterrole,clusterrolebinding", "-o", "name")).NotTo(ContainSubstring("/oaat-operator-"),
				"the ClusterRoles and bindings of config/default")
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	})
})

// adminKubectl runs kubectl as the cluster's admin and returns its output; it must succeed.
func adminKubectl(ctx context.Context, args ...string) string {
	GinkgoHelper()
	out, err := exec.CommandContext(ctx, os.Getenv("KUBECTL"), append([]string{"--kubeconfig", adminKubeconfig}, args...)...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}
