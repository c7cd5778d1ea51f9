//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The shell blocks of README.md and docs/ marked <!-- checked-by: tests/e2e NAME --> are run
// here, read from their pages (support.CheckedBlocks), as a user's shell runs them: bash, with
// kubectl and the kubectl oaat plugin on the PATH, as the cluster's admin whose current namespace
// is oaat-demo, in the repository's root (the pages' paths are relative to it). The placeholders
// of the runbooks and troubleshooting pages (NAMESPACE, GROUP, ITEM, POD, NODE, LOCK) are replaced by
// the objects of the test; every other namespace is the one the page names.

// docShell runs the pages' blocks.
type docShell struct {
	kubeconfig string
	// bin holds kubectl and kubectl-oaat, first on the PATH.
	bin string
}

// newDocShell makes the PATH and kubeconfig of the pages' commands.
func newDocShell(ctx SpecContext) docShell {
	GinkgoHelper()
	bin := GinkgoT().TempDir()
	Expect(os.Symlink(paths.kubectl, filepath.Join(bin, "kubectl"))).To(Succeed())
	Expect(os.Symlink(paths.kubectlOaat, filepath.Join(bin, "kubectl-oaat"))).To(Succeed())
	return docShell{kubeconfig: demoKubeconfig(ctx), bin: bin}
}

// blocks returns the blocks the pages mark checked-by: tests/e2e name.
func (s docShell) blocks(name string) []support.CheckedBlock {
	GinkgoHelper()
	blocks, err := support.CheckedBlocks(paths.repoRoot, "tests/e2e", name)
	Expect(err).NotTo(HaveOccurred())
	return blocks
}

// run runs a block (support.RunCheckedBlock), its placeholders replaced by values, and returns
// what it printed; it fails when a command does.
func (s docShell) run(ctx context.Context, b support.CheckedBlock, values map[string]string) string {
	GinkgoHelper()
	out, err := support.RunCheckedBlock(ctx, paths.repoRoot,
		[]string{"KUBECONFIG=" + s.kubeconfig, "PATH=" + s.bin + ":" + os.Getenv("PATH")}, b, values)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("%s:\n%s%s\n", b.Where(), b.Text, out)
	return out
}

// runAll runs every block of the name.
func (s docShell) runAll(ctx context.Context, name string, values map[string]string) {
	GinkgoHelper()
	for _, b := range s.blocks(name) {
		s.run(ctx, b, values)
	}
}

// useNamespace makes name the test's namespace until the test ends: makeIt creates it (as a page
// does, or the test), then it is labelled as the suite's; at the end it is deleted, and the test
// waits until it is gone, even when makeIt failed half-way.
func useNamespace(ctx SpecContext, name string, makeIt func()) {
	GinkgoHelper()
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelSuite: "true"}}}
	previous := ns
	DeferCleanup(func(ctx SpecContext) {
		ns = previous
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, namespace))).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(namespace), &corev1.Namespace{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "namespace %s still exists", name)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	})
	makeIt()
	Expect(k8sClient.Patch(ctx, namespace, client.Merge)).To(Succeed())
	ns = name
}

var _ = Describe("The documentation's commands", Serial, func() {
	It("run as the pages show them, in the namespaces they name", SpecTimeout(4*time.Minute), func(ctx SpecContext) {
		shell := newDocShell(ctx)

		By("README.md: the namespace oaat-demo and the samples")
		useNamespace(ctx, transcriptsNamespace, func() { shell.runAll(ctx, "quickstart", nil) })
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "testsimple").Spec.OaatType).To(Equal("oaattest"))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("the runbooks and troubleshooting: a group running an item in oaat-demo")
		lock := support.Lock(ns, "nas", 1)
		photos := support.Group(ns, "photos", "backup", "/srv/photos", "/srv/music").Locks(lock.Name).Obj()
		create(ctx, newOaatType("backup", "10m", 0), lock, photos)
		pod := waitForRunningPod(ctx, photos.Name)
		shell.runAll(ctx, "runbooks", map[string]string{
			"NAMESPACE": ns, "GROUP": photos.Name, "ITEM": "/srv/music", "POD": pod.Name, "NODE": pod.Spec.NodeName, "LOCK": lock.Name,
		})
		// The runbooks' OaatRuns (probe-, retry-) are the group's, for the item.
		Eventually(func(g Gomega) {
			runs := &v1alpha1.OaatRunList{}
			g.Expect(k8sClient.List(ctx, runs, client.InNamespace(ns))).To(Succeed())
			g.Expect(runs.Items).To(HaveLen(2))
			for _, r := range runs.Items {
				g.Expect(r.Spec.OaatGroup).To(Equal(photos.Name))
				g.Expect(r.Spec.Item).To(Equal("/srv/music"))
			}
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("docs/scheduling.md: resetting the group nightly-migrations of the current namespace")
		create(ctx, newGroup("nightly-migrations", "backup", "m1"))
		shell.runAll(ctx, "reset", nil)
		Expect(getGroup(ctx, Default, "nightly-migrations").Annotations).To(HaveKey(v1alpha1.AnnotationReset))

		By("docs/forecast.md: the plan of nightly in team-a")
		useNamespace(ctx, "team-a", func() {
			Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})).To(Succeed())
		})
		nightly := sampleGroup("oaat_v1alpha1_oaatgroup_scheduled.yaml")
		Expect(nightly.Name).To(Equal("nightly"))
		create(ctx, newOaatType(nightly.Spec.OaatType, "10m", 0), nightly)
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, nightly.Name)
			g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation))
			// The forecaster makes the condition off the first pass; a later pass writes it.
			g.Expect(meta.FindStatusCondition(group.Status.Conditions, v1alpha1.ConditionAtRisk)).NotTo(BeNil())
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		shell.runAll(ctx, "team-a", nil)

		By("docs/install.md, docs/olm.md and the runbook OaatOperatorDown: binding Prometheus's ServiceAccount to the metrics reader")
		for _, b := range shell.blocks("metrics-binding") {
			binding := &rbacv1.ClusterRoleBinding{}
			key := client.ObjectKey{Name: "prometheus-oaat-metrics"}
			Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, binding))).To(BeTrue(), "%s: the binding exists before", b.Where())
			shell.run(ctx, b, nil)
			Expect(k8sClient.Get(ctx, key, binding)).To(Succeed())
			Expect(binding.RoleRef.Name).To(Equal(metricsReaderRole))
			Expect(binding.Subjects).To(ConsistOf(HaveField("Name", prometheusSA)))
			Expect(binding.Subjects[0].Namespace).To(Equal(monitoringNamespace))
			may, reason, err := support.MayGetMetrics(ctx, clientset, monitoringNamespace, prometheusSA)
			Expect(err).NotTo(HaveOccurred())
			Expect(may).To(BeTrue(), "%s: %s", b.Where(), reason)
			Expect(k8sClient.Delete(ctx, binding)).To(Succeed())
		}

		By("docs/security.md: the admission policy on ClusterOaatLocks")
		DeferCleanup(func(ctx SpecContext) {
			out, err := exec.CommandContext(ctx, paths.kubectl, "--kubeconfig", adminKubeconfig, "delete", "--ignore-not-found",
				"-f", filepath.Join(paths.repoRoot, "config", "policy", "clusteroaatlock-writers.yaml")).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "%s", out)
		})
		shell.runAll(ctx, "policy", nil)
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "oaat-clusteroaatlock-writers"}, &admissionregistrationv1.ValidatingAdmissionPolicy{})).To(Succeed())

		By("docs/history.md: deleting every group of the cluster while the operator runs")
		shell.runAll(ctx, "delete-groups", nil)
		groups := &v1alpha1.OaatGroupList{}
		Expect(k8sClient.List(ctx, groups)).To(Succeed())
		Expect(groups.Items).To(BeEmpty())
	})
})
