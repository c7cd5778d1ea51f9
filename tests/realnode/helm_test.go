//go:build realnode

package realnode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// clusterObjects lists every object of the cluster that a user could list, as kind/namespace/name,
// but events and what lives in the namespaces of the suite's other specs (deleted as they end):
// what an install adds and an uninstall leaves. g is the caller's Gomega (an Eventually's retries
// a listing that met a kind being removed).
func clusterObjects(ctx context.Context, g Gomega) []string {
	GinkgoHelper()
	kubectl := func(args ...string) string {
		// Standard output only: kubectl warns of deprecated kinds on its standard error.
		out, err := exec.CommandContext(ctx, os.Getenv("KUBECTL"), append([]string{"--kubeconfig", adminKubeconfig}, args...)...).Output()
		g.Expect(err).NotTo(HaveOccurred(), "kubectl %s", strings.Join(args, " "))
		return string(out)
	}
	kinds := slices.DeleteFunc(strings.Fields(kubectl("api-resources", "--verbs=list", "-o", "name")), func(kind string) bool {
		return kind == "events" || kind == "events.events.k8s.io"
	})
	out := kubectl("get", strings.Join(kinds, ","), "--all-namespaces", "-o",
		`jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}{"\n"}{end}`)
	return slices.DeleteFunc(strings.Fields(out), func(object string) bool {
		kind, rest, _ := strings.Cut(object, "/")
		namespace, name, _ := strings.Cut(rest, "/")
		if kind == "Namespace" {
			namespace = name
		}
		return strings.HasPrefix(namespace, "oaat-realnode-") && namespace != ns
	})
}

// added are the objects of after that before lacks, and removed those of before that after lacks.
func objectsDiff(before, after []string) (added, removed []string) {
	for _, o := range after {
		if !slices.Contains(before, o) {
			added = append(added, o)
		}
	}
	for _, o := range before {
		if !slices.Contains(after, o) {
			removed = append(removed, o)
		}
	}
	return added, removed
}

// outsideNamespace drops the objects of the spec's own namespace, which the spec checks by itself.
func outsideNamespace(objects []string) []string {
	return slices.DeleteFunc(slices.Clone(objects), func(o string) bool {
		return strings.Contains(o, "/"+ns+"/")
	})
}

// keptByUninstall are the objects docs/install.md says the keep-data uninstalls (Helm's, and
// install.yaml's by label) leave: the CRDs and the APIService the API server registers for their
// group, the operator's namespace and what Kubernetes put in it, the leader election's Lease.
func keptByUninstall() []string {
	kept := []string{
		"APIService//" + v1alpha1.GroupVersion.Version + "." + v1alpha1.GroupVersion.Group,
		"Namespace//" + operatorNamespace,
		"ConfigMap/" + operatorNamespace + "/kube-root-ca.crt",
		"ServiceAccount/" + operatorNamespace + "/default",
		"Lease/" + operatorNamespace + "/" + v1alpha1.LeaderElectionID,
	}
	for _, plural := range []string{"oaatgroups", "oaattypes", "oaatruns", "oaatlocks", "clusteroaatlocks", "oaatgrouphistories"} {
		kept = append(kept, "CustomResourceDefinition//"+plural+".oaat.io")
	}
	return kept
}

// lastSuccess is the last success of the group's item.
func lastSuccess(group *v1alpha1.OaatGroup, item string) *metav1.Time {
	GinkgoHelper()
	status := support.ItemStatus(group, item)
	Expect(status).NotTo(BeNil(), "no status of item %s in %+v", item, group.Status.Items)
	return status.LastSuccess
}

// expectObjectsLeft waits until the cluster holds every object of before and, beside them
// outside the spec's namespace, exactly left.
func expectObjectsLeft(ctx context.Context, before, left []string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		added, removed := objectsDiff(before, clusterObjects(ctx, g))
		g.Expect(removed).To(BeEmpty(), "objects the installs and uninstalls removed")
		g.Expect(outsideNamespace(added)).To(ConsistOf(left), "objects left")
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
}

var _ = Describe("The release's Helm chart and the uninstalls that keep the data", func() {
	It("installs, upgrades with the new CRDs in force, hands the kept data to install.yaml and back, and removes everything", SpecTimeout(14*time.Minute), func(ctx SpecContext) {
		helmBin := os.Getenv("HELM")
		Expect(helmBin).NotTo(BeEmpty(), "HELM: run this suite with make test-realnode")
		chart := "oaat-operator-" + releaseVersion + ".tgz"
		// A directory with the chart alone: its blocks need nothing else of the release.
		dir := GinkgoT().TempDir()
		copyFile(filepath.Join(os.Getenv("RELEASE_DIST"), chart), filepath.Join(dir, chart))
		bin := docBin(false)
		Expect(os.Symlink(helmBin, filepath.Join(bin, "helm"))).To(Succeed())
		env := []string{"KUBECONFIG=" + adminKubeconfig, "HOME=" + dir, "PATH=" + bin + ":" + os.Getenv("PATH")}
		helmBlocks := func(name string) {
			GinkgoHelper()
			runBlocks(ctx, dir, env, name, nil, nil)
			waitForOperator(ctx)
		}
		// kept checks what an uninstall that keeps the data left: the objects docs/install.md
		// lists beside those of before, and the group with item a's last success.
		kept := func(before []string, first v1alpha1.ItemStatus) {
			GinkgoHelper()
			expectObjectsLeft(ctx, before, keptByUninstall())
			Expect(lastSuccess(getGroup(ctx, Default, "backups"), "a")).To(Equal(first.LastSuccess), "item a's last success, kept")
		}
		// takenUp adds item to the group and waits for its run: the operator just installed took
		// the kept group up, without running item a again.
		takenUp := func(item string, first v1alpha1.ItemStatus) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				group := getGroup(ctx, g, "backups")
				group.Spec.OaatItems = append(group.Spec.OaatItems, item)
				g.Expect(k8sClient.Update(ctx, group)).To(Succeed())
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
			Expect(waitForOutcome(ctx, "backups", item, 2*time.Minute).LastSuccess).NotTo(BeNil())
			Expect(lastSuccess(getGroup(ctx, Default, "backups"), "a")).To(Equal(first.LastSuccess), "item a's last success, not run again")
		}

		By("uninstalling the suite's install.yaml with everything; it is restored after")
		DeferCleanup(func(ctx SpecContext) {
			_, _ = exec.CommandContext(ctx, helmBin, "--kubeconfig", adminKubeconfig, "uninstall", "oaat-operator",
				"--namespace", operatorNamespace, "--ignore-not-found", "--wait").CombinedOutput()
			runReleaseBlocks(ctx, bin, "install-release")
			waitForOperator(ctx)
		}, NodeTimeout(4*time.Minute))
		runReleaseBlocks(ctx, bin, "uninstall-release")
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Name: operatorNamespace}, &corev1.Namespace{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s still exists (%v)", operatorNamespace, err)
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		before := clusterObjects(ctx, Default)

		By("installing the chart as docs/install.md says, into a namespace enforcing the restricted standard")
		runBlocks(ctx, dir, env, "helm-namespace", nil, nil)
		helmBlocks("helm-install")
		script := `echo "backing up $1"`
		create(ctx, newType("backup", corev1.PodSpec{Containers: []corev1.Container{busybox("main", script)}}), newGroup("backups", "backup", "a"))
		first := waitForOutcome(ctx, "backups", "a", 2*time.Minute)
		Expect(first.LastSuccess).NotTo(BeNil())

		By("standing the previous release's OaatRun CRD in for the installed one, and setting a value")
		previous := exec.CommandContext(ctx, "git", "-C", repoRoot, "show", os.Getenv("PREVIOUS_COMMIT")+":config/crd/bases/oaat.io_oaatruns.yaml")
		previousCRD, err := previous.Output()
		Expect(err).NotTo(HaveOccurred(), "the previous release's OaatRun CRD (PREVIOUS_COMMIT %q)", os.Getenv("PREVIOUS_COMMIT"))
		crdFile := filepath.Join(GinkgoT().TempDir(), "oaatruns.yaml")
		Expect(os.WriteFile(crdFile, previousCRD, 0o644)).To(Succeed())
		adminKubectl(ctx, "apply", "--server-side", "--force-conflicts", "--field-manager=previous-release", "-f", crdFile)
		// A ttlAfterFinished of 10^10 s: the previous release's CRD takes it, this one's refuses it.
		runFile := filepath.Join(GinkgoT().TempDir(), "run.yaml")
		Expect(os.WriteFile(runFile, []byte("apiVersion: oaat.io/v1alpha1\nkind: OaatRun\nmetadata:\n  name: too-long\n  namespace: "+ns+
			"\nspec:\n  oaatGroup: backups\n  item: a\n  ttlAfterFinished: 10000000000s\n"), 0o644)).To(Succeed())
		Eventually(func() error {
			_, err := kubectl(ctx, "create", "--dry-run=server", "-f", runFile)
			return err
		}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "the previous release's OaatRun CRD in force")
		helm(ctx, env, "upgrade", "oaat-operator", filepath.Join(dir, chart), "--namespace", operatorNamespace, "--reuse-values", "--set", "replicaCount=1")
		waitForOperator(ctx)

		By("upgrading as the page says: the chart's CRDs in force, the value kept")
		helmBlocks("helm-upgrade")
		Eventually(func(g Gomega) {
			out, err := kubectl(ctx, "create", "--dry-run=server", "-f", runFile)
			g.Expect(err).To(HaveOccurred(), "this release's OaatRun CRD refuses a ttlAfterFinished of 10^10 s:\n%s", out)
			g.Expect(out).To(ContainSubstring("is too long"))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		dep := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorDeployment}, dep)).To(Succeed())
		Expect(*dep.Spec.Replicas).To(BeEquivalentTo(1), "--reset-then-reuse-values keeps the replicaCount set before")
		Expect(adminKubectl(ctx, "-n", operatorNamespace, "get", "poddisruptionbudget", "-o", "name")).To(BeEmpty(),
			"one replica: no PodDisruptionBudget")

		By("uninstalling the chart, keeping the data")
		runBlocks(ctx, dir, env, "helm-uninstall", nil, nil)
		kept(before, first)

		By("installing install.yaml over the kept data, then uninstalling it by label, keeping the data")
		runReleaseBlocks(ctx, bin, "install-release")
		waitForOperator(ctx)
		takenUp("b", first)
		runReleaseBlocks(ctx, bin, "uninstall-release-keep")
		kept(before, first)

		By("installing the chart over the kept data, then removing everything as the page says")
		helmBlocks("helm-install")
		takenUp("c", first)
		runBlocks(ctx, dir, env, "helm-uninstall-all", nil, nil)
		expectObjectsLeft(ctx, before, nil)
	})
})
