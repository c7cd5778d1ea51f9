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

// The namespaces of the operator-sdk specs: run bundle and scorecard run in docs/olm.md's, and
// run bundle-upgrade in docs/upgrading.md's, both pageNamespace.
const (
	runBundleNamespace = pageNamespace
	// runBundleWorkNamespace has a group of the test's besides the samples docs/olm.md applies
	// in the operator's namespace: run bundle installs in AllNamespaces mode.
	runBundleWorkNamespace = "oaat-run-bundle"
	bundleUpgradeNamespace = pageNamespace
	scorecardNamespace     = pageNamespace
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
		DeferCleanup(func(ctx SpecContext) { deleteNamespaces(ctx, runBundleNamespace, runBundleWorkNamespace) }, NodeTimeout(3*time.Minute))

		// docs/olm.md's transcript olm-run-bundle, as a user types it: the commands run as the
		// page shows them, operator-sdk's pulls through the proxy.
		Expect(env.bundleImg).To(Equal("quay.io/oaat-io/oaat-operator-bundle:v0.3.0"), "the bundle image docs/olm.md names")
		block := &support.Transcript{Runner: sdkTranscriptRunner(proxy)}
		Expect(block.Run(ctx, "kubectl create namespace oaat-operator")).To(Succeed())
		Expect(block.Run(ctx, "operator-sdk run bundle quay.io/oaat-io/oaat-operator-bundle:v0.3.0 -n oaat-operator")).
			To(Succeed(), "pods of %s:\n%s", runBundleNamespace, describePods(ctx, runBundleNamespace))
		// operator-sdk logs in logrus's text format, which escapes the quotes of a message.
		Expect(block.String()).To(ContainSubstring(`OLM has successfully installed \"` + csvName + `\"`))
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
		expectPodsSettled(ctx, runBundleNamespace)
		Expect(block.Run(ctx, "kubectl get pods -n oaat-operator")).To(Succeed())

		// run bundle installs in AllNamespaces mode (the CSV supports it): a group of the test's
		// runs in a namespace other than the operator's.
		createNamespace(ctx, runBundleWorkNamespace)
		runItems(ctx, installMode{Name: "run bundle", InstallNamespace: runBundleNamespace, WorkNamespaces: []string{runBundleWorkNamespace}})
		AddReportEntry("run bundle: items ran", time.Since(start).Round(time.Millisecond).String())

		By("applying the samples in the operator's namespace, and deleting them while the operator runs, as docs/olm.md does")
		Expect(block.Run(ctx, "kubectl apply -n oaat-operator -f config/samples/oaat_v1alpha1_oaattype.yaml "+
			"-f config/samples/oaat_v1alpha1_oaatgroup.yaml -f config/samples/oaat_v1alpha1_oaatgroup_controlled.yaml")).To(Succeed())
		Expect(block.Run(ctx, "kubectl wait oaatgroups --all -n oaat-operator --for=condition=Ready --timeout=60s")).To(Succeed())
		Expect(block.Run(ctx, "kubectl delete oaatgroups --all -n oaat-operator --wait     # while the operator runs (see Uninstall above)")).To(Succeed())

		// The group of runBundleWorkNamespace is still there: operator-sdk cleanup deletes the
		// CRDs, and with them the groups, before the CSV, so the operator still runs to let the
		// groups go (their finalizer oaat.io/history; docs/history.md).
		By("removing it with operator-sdk cleanup")
		Expect(block.Run(ctx, "operator-sdk cleanup oaat-operator -n oaat-operator")).To(Succeed())
		Expect(block.String()).To(ContainSubstring(`Operator \"` + packageName + `\" uninstalled`))
		Expect(block.Run(ctx, "kubectl delete clusterrole -l app.kubernetes.io/name=oaat-operator")).To(Succeed())
		checkOLMTranscripts(map[string]string{"olm-run-bundle": block.String()})
		Eventually(func(g Gomega) {
			for _, kind := range []string{"subscriptions", "clusterserviceversions", "catalogsources", "operatorgroups", "installplans"} {
				out, err := kubectl(ctx, nil, "-n", runBundleNamespace, "get", kind, "-o", "name")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(out).To(BeEmpty(), "%s left in %s", kind, runBundleNamespace)
			}
			crds, err := kubectl(ctx, nil, "get", "crd", "-o", "name")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(crds).NotTo(ContainSubstring(".oaat.io"), "the operator's CRDs are left (a group's finalizer?)")
			for _, ns := range []string{runBundleNamespace, runBundleWorkNamespace} {
				pods, err := clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(pods.Items).To(BeEmpty(), "pods left in %s", ns)
			}
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
		Expect(env.bundleImg).To(Equal("quay.io/oaat-io/oaat-operator-bundle:v0.3.0"), "the bundle image docs/upgrading.md names")
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

		// docs/olm.md's transcript olm-scorecard: one test, as the page shows it (the tests of a
		// stage run in parallel, and print in the order they end), with the untar and storage
		// images of the local cluster, which the page says.
		block := &support.Transcript{Runner: sdkTranscriptRunner(proxy)}
		block.Runner.ExtraArgs = func([]string) []string { return scorecardImageFlags }
		Expect(block.Run(ctx, "operator-sdk scorecard ./bundle -n oaat-operator --wait-time 180s --selector test=olm-bundle-validation-test")).To(Succeed())
		Expect(block.String()).To(ContainSubstring("State: pass"))
		checkOLMTranscripts(map[string]string{"olm-scorecard": block.String()})
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

// sdkTranscriptRunner runs the commands of docs/olm.md's transcripts as operatorSDK does:
// operator-sdk with a home of its own and the proxy's environment.
func sdkTranscriptRunner(proxy *support.RegistryProxy) support.TranscriptRunner {
	GinkgoHelper()
	return olmTranscriptRunner(append([]string{"HOME=" + GinkgoT().TempDir()}, proxy.Env()...)...)
}

// expectPodsSettled waits until every pod of the namespace has succeeded or runs with all its
// containers ready, none being deleted, so that kubectl get pods shows where they end.
func expectPodsSettled(ctx context.Context, namespace string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		pods, err := clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		for _, p := range pods.Items {
			g.Expect(p.DeletionTimestamp).To(BeNil(), "pod %s is being deleted", p.Name)
			if p.Status.Phase == corev1.PodSucceeded {
				continue
			}
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
			for _, c := range p.Status.ContainerStatuses {
				g.Expect(c.Ready).To(BeTrue(), "container %s of pod %s", c.Name, p.Name)
			}
		}
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(Succeed(), func() string { return describePods(ctx, namespace) })
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
