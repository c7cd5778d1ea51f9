//go:build realnode

// Package realnode tests the operator end to end on the local cluster's real node
// (hack/cluster/cluster.sh with OAAT_CLUSTER_REAL_NODE=1: a kubelet with containerd, runc and the
// CNI plugins, images pulled by their public names through the node's registry): the operator
// runs as the Deployment of config/default from its image, and every item's pod runs a real
// container, whose own output (read with the pods/log API, as kubectl logs does) and exit code
// the tests check. Beside the kwok suite (tests/e2e), which plays pods out without running them.
//
// Run it with `make test-realnode`, which builds the binaries and images and names them in the
// environment. Needs root; one real node per machine.
package realnode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// What config/default deploys, and the real node's name (hack/cluster/realnode.sh).
const (
	operatorNamespace  = "oaat-operator-system"
	operatorDeployment = "oaat-operator-controller-manager"
	metricsService     = "oaat-operator-controller-manager-metrics-service"
	leaseName          = "oaat-operator.oaat.io"
	realNodeName       = "real-node"
	realNodeBridge     = "oaatbr0"
	realNodeChain      = "OAAT-REAL-NODE"
	// realNodeOwnerFile names the state dir of the cluster whose real node holds the machine.
	realNodeOwnerFile = "/run/lock/oaat-real-node.owner"
)

// labelSuite marks the namespaces of the tests, so that a later run finds those an aborted run
// left behind.
const labelSuite = "realnode.oaat.io/suite"

const poll = 250 * time.Millisecond

var (
	// operatorImage is the operator's image, by digest: the one the release's install.yaml names.
	operatorImage string
	repoRoot      string
	cluster       *support.Cluster
	k8sClient     client.Client // not cached: every assertion reads the API server itself
	clientset     kubernetes.Interface
	// adminKubeconfig is the cluster's admin kubeconfig, for the commands a test runs.
	adminKubeconfig string
	tracker         *support.OverlapTracker
	podWatch        *support.PodWatch

	// ns is the namespace of the running test, created for it alone.
	ns string
)

func TestRealNode(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Real node Suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	Expect(devkit.RequireFiles("KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER", "KUBE_SCHEDULER", "KUBECTL",
		"ETCD", "KWOK", "KUBELET", "CRI_TEARDOWN", "KUSTOMIZE", "KREW", "HELM")).To(Succeed(), "run this suite with make test-realnode")
	Expect(os.Getenv("OAAT_PAUSE_IMAGE")).NotTo(BeEmpty(), "run this suite with make test-realnode")
	var err error
	repoRoot, err = filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Setenv("OAAT_CLUSTER_REAL_NODE", "1")).To(Succeed())

	cluster = support.NewCluster(repoRoot, "realnode-cluster", GinkgoWriter)
	DeferCleanup(tearDown)
	kubeconfig, clients := support.StartSuiteCluster(ctx, cluster, poll, false)
	k8sClient, clientset, adminKubeconfig = clients.Client, clients.Clientset, kubeconfig

	support.RemoveSuiteNamespaces(ctx, k8sClient, labelSuite)
	tracker = support.NewOverlapTracker(support.OverlapTrackerOptions{KeepHistory: true})
	podWatch, err = support.WatchPods(ctx, clientset, metav1.NamespaceAll, tracker)
	Expect(err).NotTo(HaveOccurred())

	deployStart := time.Now()
	installRelease(ctx)
	waitForOperator(ctx)
	GinkgoWriter.Printf("Operator deployed and leading after %s\n", time.Since(deployStart).Round(time.Millisecond))
}, NodeTimeout(8*time.Minute))

// tearDown stops the watcher and the cluster, then checks that the real node left nothing on the
// machine: no process of the cluster, no mount under its state dir, no bridge, no iptables chain.
func tearDown() {
	var problems []string
	if podWatch != nil {
		if err := podWatch.Stop(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if tracker != nil {
		if overlaps := tracker.Overlaps(); len(overlaps) > 0 {
			problems = append(problems, fmt.Sprintf("the overlap watcher saw two live pods of a group at once: %v", overlaps))
		}
	}
	if err := cluster.Down(); err != nil {
		problems = append(problems, "stopping the local cluster: "+err.Error())
	}
	// By command line rather than by recorded pid: on a busy machine a pid is soon another
	// program's. Every process of the cluster names the state dir in its command line, the
	// containerd shims included, and a container left running keeps its shim.
	if left := devkit.ProcessesUsing(cluster.StateDir); len(left) > 0 {
		problems = append(problems, "processes left that name the state dir: "+strings.Join(left, "; "))
	}
	problems = append(problems, machineLeftovers(cluster.StateDir)...)
	Expect(problems).To(BeEmpty(), "tearing down the suite")
}

// machineLeftovers lists what of the real node is still on the machine: mounts under stateDir,
// the bridge, our iptables chains.
func machineLeftovers(stateDir string) []string {
	var left []string
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return []string{"reading mountinfo: " + err.Error()}
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && strings.HasPrefix(fields[4], stateDir+"/") {
			left = append(left, "mount "+fields[4])
		}
	}
	// The machine's one real node may be another cluster's (the up of this one was then refused):
	// its bridge and chains are not ours to miss.
	if owner, err := os.ReadFile(realNodeOwnerFile); err == nil && strings.TrimSpace(string(owner)) != stateDir {
		return left
	}
	if _, err := os.Stat("/sys/class/net/" + realNodeBridge); err == nil {
		left = append(left, "network device "+realNodeBridge)
	}
	for _, table := range []string{"nat", "filter"} {
		if err := exec.Command("iptables", "-w", "5", "-t", table, "-S", realNodeChain).Run(); err == nil {
			left = append(left, "iptables chain "+realNodeChain+" in table "+table)
		}
	}
	return left
}

// Every test gets a namespace of its own; the watcher's findings for it are checked after it.
var _ = BeforeEach(func(ctx SpecContext) {
	ns = support.CreateSuiteNamespace(ctx, k8sClient, "oaat-realnode-", labelSuite).Name
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpDiagnostics(ctx, ns)
		}
		Expect(tracker.OverlapsIn(ns)).To(BeEmpty(), "two live pods of a group at once:\n%s", tracker.Describe(ns))
		Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroup{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	})
})
