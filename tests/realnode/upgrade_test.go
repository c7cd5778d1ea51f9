//go:build realnode

package realnode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/oaat-io/oaat-operator/tests/support"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// upgradePath is one way users install and upgrade (docs/upgrading.md): how the previous
// release's files are installed, how the current release's replace them, and how everything is
// then removed. Each runs the docs' blocks, or the command they show with the previous release's
// file.
type upgradePath struct {
	name      string
	install   func(ctx context.Context, u upgradeDirs)
	upgrade   func(ctx context.Context, u upgradeDirs)
	removeAll func(ctx context.Context, u upgradeDirs)
}

// upgradeDirs are the directories of the previous release's files (PREVIOUS_DIST, make
// previous-release) and of the current one's chart, the commands the blocks run, and their
// environment.
type upgradeDirs struct {
	previous, chart, bin string
	env                  []string
}

var upgradePaths = []upgradePath{
	{
		name: "install.yaml",
		install: func(ctx context.Context, u upgradeDirs) {
			runBlocks(ctx, u.previous, u.env, "install-release", nil, nil)
		},
		upgrade: func(ctx context.Context, u upgradeDirs) {
			runReleaseBlocks(ctx, u.bin, "upgrade-release")
		},
		removeAll: func(ctx context.Context, u upgradeDirs) {
			runReleaseBlocks(ctx, u.bin, "uninstall-release")
		},
	},
	{
		name: "Helm",
		install: func(ctx context.Context, u upgradeDirs) {
			runBlocks(ctx, u.chart, u.env, "helm-namespace", nil, nil)
			// docs/install.md's helm-install, with the previous release's chart.
			helm(ctx, u.env, "install", "oaat-operator", filepath.Join(u.previous, "oaat-operator-"+os.Getenv("PREVIOUS_VERSION")+".tgz"),
				"--namespace", operatorNamespace)
		},
		upgrade: func(ctx context.Context, u upgradeDirs) {
			runBlocks(ctx, u.chart, u.env, "helm-upgrade", nil, nil)
		},
		removeAll: func(ctx context.Context, u upgradeDirs) {
			runBlocks(ctx, u.chart, u.env, "helm-uninstall-all", nil, nil)
		},
	},
}

// helm runs the Helm of the suite (HELM) with the environment env added, and logs its output.
func helm(ctx context.Context, env []string, args ...string) {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, os.Getenv("HELM"), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "helm %v:\n%s", args, out)
	GinkgoWriter.Printf("helm %v:\n%s", args, out)
}

var _ = Describe("Upgrading from the previous release's files", func() {
	for _, path := range upgradePaths {
		It("by "+path.name+": one pod at a time throughout, each run recorded once, status kept, then quiet", SpecTimeout(12*time.Minute), func(ctx SpecContext) {
			upgradeBy(ctx, path)
		})
	}
})

// upgradeBy installs the previous release by the path, starts the upgrade workload
// (support.Upgrade), upgrades to the current release by the same path mid-run, checks what it
// kept, and removes everything; the suite's install.yaml is restored after.
func upgradeBy(ctx context.Context, path upgradePath) {
	previousVersion, previousDist := os.Getenv("PREVIOUS_VERSION"), os.Getenv("PREVIOUS_DIST")
	Expect(previousVersion).NotTo(BeEmpty(), "PREVIOUS_VERSION: run this suite with make test-realnode")
	Expect(previousDist).NotTo(BeEmpty(), "PREVIOUS_DIST: run this suite with make test-realnode")
	previousInstall, err := os.ReadFile(filepath.Join(previousDist, "install.yaml"))
	Expect(err).NotTo(HaveOccurred(), "the previous release's install.yaml (make previous-release)")
	previousImage := releaseImage(previousInstall)

	// Each release's files in a directory of their own, as a user downloads them.
	u := upgradeDirs{previous: GinkgoT().TempDir(), chart: GinkgoT().TempDir(), bin: docBin(false)}
	for _, f := range []string{"install.yaml", "oaat-operator-" + previousVersion + ".tgz"} {
		copyFile(filepath.Join(previousDist, f), filepath.Join(u.previous, f))
	}
	chart := "oaat-operator-" + releaseVersion + ".tgz"
	copyFile(filepath.Join(os.Getenv("RELEASE_DIST"), chart), filepath.Join(u.chart, chart))
	Expect(os.Symlink(os.Getenv("HELM"), filepath.Join(u.bin, "helm"))).To(Succeed())
	u.env = []string{"KUBECONFIG=" + adminKubeconfig, "HOME=" + u.chart, "PATH=" + u.bin + ":" + os.Getenv("PATH")}

	start := time.Now()
	mark := func(what string) {
		AddReportEntry("upgrade by "+path.name+": "+what, time.Since(start).Round(time.Millisecond).String())
		GinkgoWriter.Printf("upgrade by %s: %s at +%s\n", path.name, what, time.Since(start).Round(time.Millisecond))
	}

	By("uninstalling the suite's install.yaml with everything; it is restored after")
	DeferCleanup(func(ctx SpecContext) {
		// Whatever a failure left, the previous release's or this one's, by either path: its Helm
		// release, its CRDs (an older CRD of Helm's would conflict with install.yaml's), its objects.
		_, _ = exec.CommandContext(ctx, os.Getenv("HELM"), "--kubeconfig", adminKubeconfig, "uninstall", "oaat-operator",
			"--namespace", operatorNamespace, "--ignore-not-found", "--wait").CombinedOutput()
		_, _ = kubectl(ctx, "delete", "oaatgroups", "--all", "--all-namespaces", "--wait")
		_, _ = kubectl(ctx, "delete", "-f", filepath.Join(releaseDir, "install.yaml"), "--ignore-not-found", "--wait")
		runReleaseBlocks(ctx, u.bin, "install-release")
		waitForOperator(ctx)
	}, NodeTimeout(5*time.Minute))
	runReleaseBlocks(ctx, u.bin, "uninstall-release")
	Eventually(func(g Gomega) {
		err := k8sClient.Get(ctx, client.ObjectKey{Name: operatorNamespace}, &corev1.Namespace{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s still exists (%v)", operatorNamespace, err)
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())

	By("installing the previous release, " + previousVersion + ", by " + path.name)
	path.install(ctx, u)
	waitForOperator(ctx)
	expectOperatorImage(ctx, previousImage)
	mark("previous release installed")

	By("creating groups of several kinds, one of them mid-run when the upgrade starts, and an OaatRun left pending")
	upgrade := support.Upgrade{Client: k8sClient, Namespace: ns, RunFor: 10 * time.Second}
	upgrade.Create(ctx)
	Eventually(func(g Gomega) { upgrade.Started(ctx, g) }).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	before := upgrade.Statuses(ctx)
	mark("first runs started")

	By("upgrading to " + releaseVersion + " by " + path.name + ", as docs/upgrading.md says")
	path.upgrade(ctx, u)
	waitForOperator(ctx)
	expectOperatorImage(ctx, operatorImage)
	// waitForOperator waited for a leader among the new Deployment's pods, the old ones gone.
	_, lease := leaderPod(ctx, Default)
	Expect(lease.Spec.AcquireTime).NotTo(BeNil(), "the Lease of the new leader")
	leaderAt := lease.Spec.AcquireTime.Time
	mark("new manager leader")

	By("waiting until every due item has run, the pending OaatRun is served and one made now too")
	upgrade.CreateRun(ctx, "after-upgrade", "a")
	Eventually(func(g Gomega) { upgrade.Done(ctx, g) }).WithContext(ctx).WithTimeout(4 * time.Minute).Should(Succeed())
	mark("all due items done")
	Expect(upgrade.FirstPodSince(tracker, leaderAt.Add(-time.Second)).IsZero()).To(BeFalse(),
		"no item pod was created after the new manager became leader")

	By("checking one pod at a time, each run recorded once, nothing recorded lost, then quiet")
	Expect(tracker.OverlapsIn(ns)).To(BeEmpty(), tracker.Describe(ns))
	upgrade.ExpectRecordedOnce(ctx, tracker)
	upgrade.ExpectKept(ctx, tracker, before)
	upgrade.ExpectQuiet(ctx, 20*time.Second)
	upgrade.ExpectStoredVersions(ctx)
	mark("checked")

	By("removing everything by " + path.name)
	Expect(support.DeleteGroups(ctx, k8sClient, time.Minute, ns)).To(Succeed())
	path.removeAll(ctx, u)
}

// expectOperatorImage checks that the operator's Deployment runs image.
func expectOperatorImage(ctx context.Context, image string) {
	GinkgoHelper()
	dep := &appsv1.Deployment{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorDeployment}, dep)).To(Succeed())
	Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(image), "the operator's image")
}
