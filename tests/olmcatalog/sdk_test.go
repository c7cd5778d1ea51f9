//go:build olmcatalog

package olmcatalog

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// The namespaces of the operator-sdk specs.
const (
	runBundleNamespace = "oaat-run-bundle"
	// bundleUpgradeNamespace is docs/upgrading.md's, whose run bundle-upgrade runs there.
	bundleUpgradeNamespace = pageNamespace
	scorecardNamespace     = "oaat-scorecard"
)

// scorecardImageFlags name the scorecard's untar and storage images: their defaults are digests of
// operator-sdk's published images, which no local build can reproduce; the busybox of make images
// is the busybox those images are built from (as the Makefile's SCORECARD_FLAGS have it).
var scorecardImageFlags = []string{"--untar-image", "docker.io/library/busybox:1.36", "--storage-image", "docker.io/library/busybox:1.36"}

var _ = Describe("operator-sdk", Ordered, func() {
	// proxy answers operator-sdk's own pulls (the bundle image, the index image's labels) for
	// quay.io from the node's registry: this machine has no route to quay.io.
	var proxy *support.RegistryProxy

	BeforeAll(func(ctx SpecContext) {
		var err error
		proxy, err = support.StartRegistryProxy(filepath.Join(cluster.StateDir, "registry-proxy"), nodeRegistry(ctx), "quay.io")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(proxy.Close)
	})

	It("run bundle installs the bundle image, a group runs real item pods, and cleanup removes it all", func(ctx SpecContext) {
		start := time.Now()
		createNamespace(ctx, runBundleNamespace)
		DeferCleanup(func(ctx SpecContext) { deleteNamespaces(ctx, runBundleNamespace) }, NodeTimeout(3*time.Minute))

		out, err := operatorSDK(ctx, proxy, "run", "bundle", env.bundleImg, "--namespace", runBundleNamespace, "--timeout", "5m")
		Expect(err).NotTo(HaveOccurred(), "pods of %s:\n%s", runBundleNamespace, describePods(ctx, runBundleNamespace))
		// operator-sdk logs in logrus's text format, which escapes the quotes of a message.
		Expect(out).To(ContainSubstring(`OLM has successfully installed \"` + csvName + `\"`))
		AddReportEntry("run bundle: CSV Succeeded", time.Since(start).Round(time.Millisecond).String())

		By("checking the registry pod operator-sdk made and the operator's Deployment, both on the real node")
		pods, err := clientset.CoreV1().Pods(runBundleNamespace).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		var registry []string
		for _, p := range pods.Items {
			// The registry pod serves the catalog from run bundle's default index image.
			if p.Spec.Containers[0].Image == "quay.io/operator-framework/opm:latest" && p.Status.Phase == corev1.PodRunning {
				registry = append(registry, p.Spec.NodeName)
			}
		}
		Expect(registry).To(Equal([]string{"real-node"}), "the registry pod of run bundle:\n%s", describePods(ctx, runBundleNamespace))
		expectPodsOnRealNode(ctx, runBundleNamespace, "control-plane=controller-manager", env.img)

		// run bundle installs in AllNamespaces mode (the CSV supports it): the group runs in the
		// operator's namespace.
		runItems(ctx, installMode{Name: "run bundle", InstallNamespace: runBundleNamespace, WorkNamespaces: []string{runBundleNamespace}})
		AddReportEntry("run bundle: items ran", time.Since(start).Round(time.Millisecond).String())

		// As a user types it, the groups still there: operator-sdk cleanup deletes the CRDs, and
		// with them the groups, before the CSV, so the operator still runs to let the groups go
		// (their finalizer oaat.io/history; docs/history.md).
		By("removing it with operator-sdk cleanup")
		out, err = operatorSDK(ctx, proxy, "cleanup", packageName, "--namespace", runBundleNamespace, "--timeout", "3m")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring(`Operator \"` + packageName + `\" uninstalled`))
		Eventually(func(g Gomega) {
			for _, kind := range []string{"subscriptions", "clusterserviceversions", "catalogsources", "operatorgroups", "installplans"} {
				out, err := kubectl(ctx, nil, "-n", runBundleNamespace, "get", kind, "-o", "name")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(out).To(BeEmpty(), "%s left in %s", kind, runBundleNamespace)
			}
			crds, err := kubectl(ctx, nil, "get", "crd", "-o", "name")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(crds).NotTo(ContainSubstring(".oaat.io"), "the operator's CRDs are left (a group's finalizer?)")
			pods, err := clientset.CoreV1().Pods(runBundleNamespace).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods.Items).To(BeEmpty(), "pods left in %s", runBundleNamespace)
			cms, err := clientset.CoreV1().ConfigMaps(runBundleNamespace).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			for _, cm := range cms.Items {
				g.Expect(cm.Name).To(Equal("kube-root-ca.crt"), "ConfigMap left in %s", runBundleNamespace)
			}
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		expectNothingLeft(ctx)
		AddReportEntry("run bundle: cleaned up", time.Since(start).Round(time.Millisecond).String())
	}, SpecTimeout(12*time.Minute))

	It("run bundle-upgrade takes the previous release's bundle to this one", func(ctx SpecContext) {
		start := time.Now()
		createNamespace(ctx, bundleUpgradeNamespace)
		DeferCleanup(func(ctx SpecContext) { deleteNamespaces(ctx, bundleUpgradeNamespace) }, NodeTimeout(3*time.Minute))

		out, err := operatorSDK(ctx, proxy, "run", "bundle", env.previousBundleImg, "--namespace", bundleUpgradeNamespace, "--timeout", "5m")
		Expect(err).NotTo(HaveOccurred(), "pods of %s:\n%s", bundleUpgradeNamespace, describePods(ctx, bundleUpgradeNamespace))
		Expect(out).To(ContainSubstring(`OLM has successfully installed \"` + previousCSVName + `\"`))
		expectPodsOnRealNode(ctx, bundleUpgradeNamespace, "control-plane=controller-manager", env.previousImg)
		AddReportEntry("run bundle-upgrade: previous release installed", time.Since(start).Round(time.Millisecond).String())

		// As docs/upgrading.md has it (marked checked-by: tests/olmcatalog bundle-upgrade), with
		// operator-sdk's pulls through the proxy.
		Expect(env.bundleImg).To(Equal("quay.io/oaat-io/oaat-operator-bundle:v0.2.0"), "the bundle image docs/upgrading.md names")
		out = runDocBlocks(ctx, "bundle-upgrade", append([]string{"HOME=" + GinkgoT().TempDir()}, proxy.Env()...)...)
		Expect(out).To(ContainSubstring(`Successfully upgraded to \"` + csvName + `\"`))
		expectPodsOnRealNode(ctx, bundleUpgradeNamespace, "control-plane=controller-manager", env.img)
		runItems(ctx, installMode{Name: "run bundle-upgrade", InstallNamespace: bundleUpgradeNamespace, WorkNamespaces: []string{bundleUpgradeNamespace}})
		AddReportEntry("run bundle-upgrade: upgraded, items ran", time.Since(start).Round(time.Millisecond).String())

		out, err = operatorSDK(ctx, proxy, "cleanup", packageName, "--namespace", bundleUpgradeNamespace, "--timeout", "3m")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring(`Operator \"` + packageName + `\" uninstalled`))
		expectNothingLeft(ctx)
	}, SpecTimeout(12*time.Minute))

	It("scorecard runs every test of the bundle as a pod on the real node, and all pass", func(ctx SpecContext) {
		start := time.Now()
		createNamespace(ctx, scorecardNamespace)
		DeferCleanup(func(ctx SpecContext) { deleteNamespaces(ctx, scorecardNamespace) }, NodeTimeout(3*time.Minute))
		tests := scorecardTests()
		pods := watchPods(ctx, scorecardNamespace)

		stdout, err := operatorSDKStdout(ctx, proxy, append([]string{"scorecard", "./bundle", "--namespace", scorecardNamespace,
			"--wait-time", "180s", "--output", "json"}, scorecardImageFlags...)...)
		Expect(err).NotTo(HaveOccurred(), "the scorecard's JSON:\n%s", stdout)
		var list struct {
			Items []struct {
				Spec struct {
					Image      string   `json:"image"`
					Entrypoint []string `json:"entrypoint"`
				} `json:"spec"`
				Status struct {
					Results []struct {
						Name   string   `json:"name"`
						State  string   `json:"state"`
						Errors []string `json:"errors"`
						Log    string   `json:"log"`
					} `json:"results"`
				} `json:"status"`
			} `json:"items"`
		}
		Expect(json.Unmarshal([]byte(stdout), &list)).To(Succeed(), "the scorecard's output:\n%s", stdout)
		ran := map[string]string{}
		for _, item := range list.Items {
			Expect(item.Status.Results).To(HaveLen(1), "results of %v", item.Spec.Entrypoint)
			r := item.Status.Results[0]
			Expect(r.State).To(Equal("pass"), "scorecard test %s (%s): errors %v\n%s", r.Name, item.Spec.Image, r.Errors, r.Log)
			ran[strings.Join(item.Spec.Entrypoint, " ")] = item.Spec.Image
		}
		Expect(ran).To(Equal(tests), "the tests that ran, against bundle/tests/scorecard/config.yaml")

		By("checking that each test ran as a pod of its image on the real node")
		seen := pods.stop()
		for _, image := range tests {
			Expect(seen).To(HaveKeyWithValue(image, "real-node"), "pods seen in %s: %v", scorecardNamespace, seen)
		}
		AddReportEntry("scorecard: all passed", time.Since(start).Round(time.Millisecond).String())
	}, SpecTimeout(6*time.Minute))
})

// operatorSDK runs operator-sdk as a user would on this machine: the admin's kubeconfig, a home of
// its own, and the proxy's environment; it returns what it printed (its log goes to the standard
// error).
func operatorSDK(ctx context.Context, proxy *support.RegistryProxy, args ...string) (string, error) {
	stdout, stderr, err := runOperatorSDK(ctx, proxy, args...)
	return stdout + stderr, err
}

// operatorSDKStdout runs operator-sdk like operatorSDK and returns its standard output only.
func operatorSDKStdout(ctx context.Context, proxy *support.RegistryProxy, args ...string) (string, error) {
	stdout, _, err := runOperatorSDK(ctx, proxy, args...)
	return stdout, err
}

func runOperatorSDK(ctx context.Context, proxy *support.RegistryProxy, args ...string) (string, string, error) {
	GinkgoHelper()
	home := GinkgoT().TempDir()
	cmd := exec.CommandContext(ctx, env.operatorSDK, args...)
	cmd.Dir = env.repoRoot
	cmd.Env = append(os.Environ(), append([]string{"KUBECONFIG=" + adminKubeconfig, "HOME=" + home}, proxy.Env()...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	GinkgoWriter.Printf("$ operator-sdk %s\n", strings.Join(args, " "))
	err := cmd.Run()
	GinkgoWriter.Printf("%s%s", stderr.String(), stdout.String())
	return stdout.String(), stderr.String(), err
}

// scorecardTests returns the tests of bundle/tests/scorecard/config.yaml: entrypoint to image.
func scorecardTests() map[string]string {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(env.repoRoot, "bundle", "tests", "scorecard", "config.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var config struct {
		Stages []struct {
			Tests []struct {
				Image      string   `json:"image"`
				Entrypoint []string `json:"entrypoint"`
			} `json:"tests"`
		} `json:"stages"`
	}
	Expect(yaml.Unmarshal(data, &config)).To(Succeed())
	tests := map[string]string{}
	for _, stage := range config.Stages {
		for _, t := range stage.Tests {
			tests[strings.Join(t.Entrypoint, " ")] = t.Image
		}
	}
	Expect(tests).NotTo(BeEmpty())
	return tests
}

// podWatch records, for each image of a pod's containers, the node a pod of it was bound to.
type podWatch struct {
	w    watch.Interface
	done chan struct{}
	mu   sync.Mutex
	seen map[string]string
}

// watchPods watches the namespace's pods until stop.
func watchPods(ctx context.Context, namespace string) *podWatch {
	GinkgoHelper()
	w, err := clientset.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	pw := &podWatch{w: w, done: make(chan struct{}), seen: map[string]string{}}
	go func() {
		defer close(pw.done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || pod.Spec.NodeName == "" {
				continue
			}
			pw.mu.Lock()
			for _, c := range pod.Spec.Containers {
				pw.seen[c.Image] = pod.Spec.NodeName
			}
			pw.mu.Unlock()
		}
	}()
	return pw
}

// stop ends the watch and returns what it saw: image to node.
func (pw *podWatch) stop() map[string]string {
	pw.w.Stop()
	<-pw.done
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.seen
}
