//go:build realnode

package realnode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The runbooks' blocks that read an item pod's log (kubectl logs), which only a real kubelet
// serves, marked <!-- checked-by: tests/realnode NAME --> in their pages: run here as a user's
// shell runs them (support.RunCheckedBlock), with kubectl and the kubectl oaat plugin on the PATH,
// their placeholders replaced by the test's namespace, group, item and pod.

// runDocBlocks runs the blocks of the docs marked checked-by: tests/realnode name.
func runDocBlocks(ctx context.Context, bin, name string, values map[string]string) {
	GinkgoHelper()
	blocks, err := support.CheckedBlocks(repoRoot, "tests/realnode", name)
	Expect(err).NotTo(HaveOccurred())
	env := []string{"KUBECONFIG=" + adminKubeconfig, "PATH=" + bin + ":" + os.Getenv("PATH")}
	for _, b := range blocks {
		out, err := support.RunCheckedBlock(ctx, repoRoot, env, b, values)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("%s:\n%s%s\n", b.Where(), b.Text, out)
		if pod := values["POD"]; pod != "" {
			Expect(out).To(ContainSubstring("backing up "+values["ITEM"]), "%s: the log of pod %s", b.Where(), pod)
		}
	}
}

var _ = Describe("The runbooks' commands that read an item pod's log", func() {
	It("run as the pages show them, on the last pod of a failed item and on the pod of a running one", func(ctx SpecContext) {
		bin := GinkgoT().TempDir()
		build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, "kubectl-oaat"), "./cmd/kubectl-oaat")
		build.Dir = repoRoot
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "building the plugin:\n%s", out)
		Expect(os.Symlink(os.Getenv("KUBECTL"), filepath.Join(bin, "kubectl"))).To(Succeed())

		group := newGroup("docs", "docs", "failing")
		group.Spec.FailureCoolOff = "1h"
		create(ctx, newType("docs", corev1.PodSpec{Containers: []corev1.Container{
			busybox("main", `echo "backing up $1"; [ "$1" != failing ] || exit 3; sleep 120`),
		}}), group)
		failed := waitForOutcome(ctx, group.Name, "failing", 2*time.Minute)
		Expect(failed.LastFailure).NotTo(BeNil())
		Expect(failed.LastPodName).NotTo(BeEmpty())
		runDocBlocks(ctx, bin, "last-pod-logs", map[string]string{
			"NAMESPACE": ns, "GROUP": group.Name, "ITEM": "failing", "POD": failed.LastPodName,
		})

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
