//go:build realnode

package realnode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The release the suite installs (make release, which make test-realnode runs first into
// RELEASE_DIST): the files a user downloads, copied into releaseDir, a directory that holds
// nothing else; krewRoot is where krew installed the release's plugin.
var (
	releaseDir     string
	releaseVersion string
	krewRoot       string
)

// releaseFiles are the files of the release a user on this machine (Linux, amd64) fetches: the
// install files, the plugin's archive and its krew manifest.
func releaseFiles(version string) []string {
	return []string{"install.yaml", "install-namespace.yaml", "oaat.yaml", "kubectl-oaat_v" + version + "_linux_amd64.tar.gz"}
}

// installRelease installs the operator and the plugin from the release's files alone, as
// docs/install.md says (the blocks marked checked-by: tests/realnode install-release and
// install-release-plugin): kubectl apply --server-side -f install.yaml, whose image is named by
// digest (the node pulls it through its registry mirror, where the cluster pushed the images make
// images built, the release's), then krew's offline install of the plugin. The operator's image
// is the one install.yaml names.
func installRelease(ctx context.Context) {
	GinkgoHelper()
	dist := os.Getenv("RELEASE_DIST")
	Expect(dist).NotTo(BeEmpty(), "RELEASE_DIST, the directory make release wrote: run this suite with make test-realnode")
	releaseVersion = os.Getenv("VERSION")
	Expect(releaseVersion).NotTo(BeEmpty(), "VERSION: run this suite with make test-realnode")
	releaseDir = GinkgoT().TempDir()
	for _, f := range releaseFiles(releaseVersion) {
		copyFile(filepath.Join(dist, f), filepath.Join(releaseDir, f))
	}
	install, err := os.ReadFile(filepath.Join(releaseDir, "install.yaml"))
	Expect(err).NotTo(HaveOccurred())
	operatorImage = releaseImage(install)

	bin := docBin(false)
	Expect(os.Symlink(os.Getenv("KREW"), filepath.Join(bin, "kubectl-krew"))).To(Succeed())
	runReleaseBlocks(ctx, bin, "install-release")
	krewRoot = GinkgoT().TempDir()
	out := runReleaseBlocks(ctx, bin, "install-release-plugin")
	Expect(out).To(ContainSubstring("Installed plugin: oaat"))
	expectReleaseVersions(out)
}

// releaseImage is the operator image a release's install.yaml names, by digest.
func releaseImage(install []byte) string {
	GinkgoHelper()
	m := regexp.MustCompile(`(?m)^\s+image: (quay\.io/oaat-io/oaat-operator@sha256:[0-9a-f]{64})$`).FindSubmatch(install)
	Expect(m).NotTo(BeNil(), "install.yaml names the operator image by digest")
	return string(m[1])
}

// copyFile copies the file from to the file to.
func copyFile(from, to string) {
	GinkgoHelper()
	data, err := os.ReadFile(from)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(to, data, 0o644)).To(Succeed())
}

// runReleaseBlocks runs the docs' blocks marked checked-by: tests/realnode name in releaseDir,
// with the commands of bin (docBin's, and krew as kubectl's plugin kubectl-krew for the plugin's
// install) and the plugins krew installed on the PATH, as a user with krew set up has them.
func runReleaseBlocks(ctx context.Context, bin, name string) string {
	GinkgoHelper()
	env := []string{"KUBECONFIG=" + adminKubeconfig, "KREW_ROOT=" + krewRoot, "HOME=" + releaseDir,
		"PATH=" + bin + ":" + filepath.Join(krewRoot, "bin") + ":" + os.Getenv("PATH")}
	return runBlocks(ctx, releaseDir, env, name, nil, nil)
}

// releasedPlugin is the plugin krew installed from the release's archive.
func releasedPlugin() string {
	return filepath.Join(krewRoot, "bin", "kubectl-oaat")
}

// expectReleaseVersions checks what kubectl oaat version printed: the plugin and the operator both
// of the release, and no warning of a skew between them.
func expectReleaseVersions(out string) {
	GinkgoHelper()
	Expect(out).To(MatchRegexp(`(?m)^Client Version: `+regexp.QuoteMeta(releaseVersion)+` \(revision [0-9a-f]{40}, go1\.`),
		"the released plugin's version")
	Expect(out).To(ContainSubstring("Server Version: "+releaseVersion+" (Deployment "+operatorNamespace+"/"+operatorDeployment+")"),
		"the version of the operator install.yaml installed")
	// (krew, run without a terminal, warns that it discards its standard input: not this warning.)
	Expect(out).NotTo(MatchRegexp(`(?m)^WARNING: the plugin`), "kubectl oaat version's warning of a skew")
}

var _ = Describe("The release's install-namespace.yaml", func() {
	It("installs an operator that runs the groups of its own namespace and leaves the others' alone", SpecTimeout(6*time.Minute), func(ctx SpecContext) {
		By("uninstalling the suite's install as docs/install.md says; it is restored after")
		bin := docBin(false)
		namespaced := filepath.Join(releaseDir, "install-namespace.yaml")
		DeferCleanup(func(ctx SpecContext) {
			adminKubectl(ctx, "delete", "oaatgroups", "--all", "--all-namespaces", "--wait")
			adminKubectl(ctx, "delete", "--ignore-not-found", "-f", namespaced)
			runReleaseBlocks(ctx, bin, "install-release")
			waitForOperator(ctx)
		}, NodeTimeout(4*time.Minute))
		runReleaseBlocks(ctx, bin, "uninstall-release")
		Expect(adminKubectl(ctx, "get", "crd", "-o", "name")).NotTo(ContainSubstring(".oaat.io"), "CRDs left")

		runReleaseBlocks(ctx, bin, "install-release-namespace")
		waitForOperator(ctx)
		version, err := exec.CommandContext(ctx, releasedPlugin(), "--kubeconfig", adminKubeconfig, "version").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "kubectl oaat version:\n%s", version)
		expectReleaseVersions(string(version))

		By("a group in " + operatorNamespace + " runs its item on the real node; the same group in " + ns + " gets no pod")
		script := `echo "backing up $1"`
		mine := newGroup("watched", "watched", "a")
		mine.Namespace = operatorNamespace
		// The operator's namespace enforces the restricted Pod Security Standard.
		mineType := newType("watched", corev1.PodSpec{Containers: []corev1.Container{support.Restricted(busybox("main", script))}})
		mineType.Namespace = operatorNamespace
		other := newGroup("unwatched", "unwatched", "a")
		create(ctx, mineType, mine, newType("unwatched", corev1.PodSpec{Containers: []corev1.Container{busybox("main", script)}}), other)
		done := waitForOutcomeIn(ctx, operatorNamespace, mine.Name, "a", 2*time.Minute)
		Expect(done.LastSuccess).NotTo(BeNil())
		Expect(done.LastPodName).NotTo(BeEmpty())

		og := &v1alpha1.OaatGroup{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(other), og)).To(Succeed())
		Expect(og.Status.ObservedGeneration).To(BeZero(), "no operator wrote the status of a group of %s: %+v", ns, og.Status)
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
		Expect(pods.Items).To(BeEmpty(), "pods in %s, which the operator does not watch", ns)

		By("the released plugin reads the group of the watched namespace")
		status := exec.CommandContext(ctx, releasedPlugin(), "--kubeconfig", adminKubeconfig, "-n", operatorNamespace, "status", mine.Name)
		out, err := status.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "kubectl oaat status:\n%s", out)
		Expect(string(out)).To(MatchRegexp(`(?m)^`+operatorNamespace+`/watched\s+type=watched\s`), "kubectl oaat status:\n%s", out)
		Expect(string(out)).To(MatchRegexp(`(?m)^\s+a\s+\S+\s+ago\s`), "kubectl oaat status: item a's last success:\n%s", out)
	})
})
