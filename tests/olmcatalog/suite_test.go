//go:build olmcatalog

// Package olmcatalog installs the operator from its catalog image the way a user's cluster does,
// on a local cluster of its own with a real node (hack/cluster with OAAT_CLUSTER_REAL_NODE=1, state
// in .state/olmcatalog-cluster, purged at the start of every run): kube-proxy and CoreDNS give the
// node Services and cluster DNS (hack/cluster/services.sh); OLM's CRDs and its quickstart
// deployment manifests (olm.yaml of the pinned operator-lifecycle-manager, the OLM image by the
// name of its release) run OLM's olm and catalog operators as Deployments on the real node, from
// the OLM image make images builds. Every image is pulled by its public name through the node's
// registry mirror.
//
// A CatalogSource names the catalog image; OLM's registry pod serves it and the catalog operator
// reaches it through its Service. For each install mode, an OperatorGroup and a Subscription: the
// InstallPlan completes (the bundle unpack Job pulls the bundle image and copies its manifests
// with OLM's cpb), the CSV reaches Succeeded, and the Deployment OLM made runs the operator from
// its image on the real node; an OaatGroup then runs real busybox item pods in each target
// namespace, and none in a namespace outside the targets. Uninstalling (Subscription, CSV, then the
// CRDs, as the README says) leaves nothing of ours.
//
// Run it with `make test-olm-catalog` (root: the real node), which builds the binaries and the
// images and names them in the environment.
package olmcatalog

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// Polling of Eventually and Consistently; each call states its own timeout.
const poll = 500 * time.Millisecond

var (
	env             testEnv
	cluster         *support.Cluster
	adminKubeconfig string
	k8sClient       client.Client // not cached: every assertion reads the API server itself
	clientset       kubernetes.Interface
	dynClient       dynamic.Interface
	objects         support.Objects // reads and writes OLM's objects through dynClient
	adminCfg        *rest.Config
)

func TestOLMCatalog(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "OLM catalog image Suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	// The clients' log (controller-runtime's) goes to the spec's output.
	logf.SetLogger(GinkgoLogr)

	var err error
	env, err = loadEnv()
	Expect(err).NotTo(HaveOccurred())
	csvName, previousCSVName = csvOf(env.bundleImg), csvOf(env.previousBundleImg)

	cluster = support.NewCluster(env.repoRoot, "olmcatalog-cluster", GinkgoWriter)
	DeferCleanup(tearDown)
	var clients support.Clients
	adminKubeconfig, clients = support.StartSuiteCluster(ctx, cluster, poll, true)
	adminCfg, k8sClient, clientset, dynClient = clients.Config, clients.Client, clients.Clientset, clients.Dynamic
	objects = support.Objects{Dynamic: dynClient}

	step := time.Now()
	deployOLM(ctx)
	AddReportEntry("OLM deployed and available", time.Since(step).Round(time.Millisecond).String())

	step = time.Now()
	createCatalogSource(ctx)
	AddReportEntry("catalog READY", time.Since(step).Round(time.Millisecond).String())
}, NodeTimeout(15*time.Minute))

// tearDown stops the cluster (the real node's down removes its pods, mounts, bridge and iptables
// chains) and checks that no process of the run is left.
func tearDown() {
	if cluster == nil || keepCluster {
		return
	}
	var problems []string
	pids := cluster.PIDs()
	if err := cluster.Down(); err != nil {
		problems = append(problems, "stopping the local cluster: "+err.Error())
	}
	problems = append(problems, support.ProcessesLeft(pids, cluster.StateDir, 10*time.Second)...)
	// kube-proxy's chains (KUBE-*, with the KUBE-FIREWALL that its --cleanup leaves) must go at down.
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(save).Output()
		if err != nil {
			problems = append(problems, save+": "+err.Error())
			continue
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "KUBE-") {
				problems = append(problems, save+" shows a rule or chain left by kube-proxy: "+line)
			}
		}
	}
	Expect(problems).To(BeEmpty(), "tearing down the suite")
}

// keepCluster, when set, leaves the cluster up after the suite, to look at it.
var keepCluster = os.Getenv("OLM_CATALOG_KEEP_CLUSTER") == "1"
