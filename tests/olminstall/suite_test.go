//go:build olminstall

// Package olminstall installs the operator the way a user of OLM does, on a local cluster of its
// own (hack/cluster, state in .state/olm-cluster, purged at the start of every run so that the
// install starts from an empty cluster): OLM's CRDs and the Prometheus Operator's servicemonitors
// and prometheusrules CRDs (the bundle ships a ServiceMonitor and a PrometheusRule) are applied,
// OLM's olm and catalog operators run as processes outside the cluster, and a catalog rendered
// from bundle/ (with the manifests inline, so that nothing pulls an image) is served by
// `opm serve` and named by a grpc CatalogSource.
//
// Then, for each install mode, an OperatorGroup and a Subscription in a fresh namespace: the
// catalog operator must resolve it and complete an InstallPlan that creates the CRDs, the
// ServiceAccount, the RBAC and the CSV; the olm operator must create the Deployment (kwok plays
// its pod: Running and Ready, no image pulled) and bring the CSV to Succeeded. The Deployment's
// pod template must take WATCH_NAMESPACE from the olm.targetNamespaces annotation. Last,
// bin/manager runs outside the cluster with a token of the ServiceAccount OLM created and with the
// WATCH_NAMESPACE OLM set, so that it holds exactly what the CSV granted, and runs two items of an
// OaatGroup one at a time in each watched namespace; its log must not report a refused request.
// The mode is then uninstalled (Subscription, CSV, OperatorGroup; OLM keeps the CRDs), once the
// catalog operator is done executing the InstallPlan (see catalogDoneWith), and nothing OLM made for
// the CSV but the CRDs may stay.
//
// Run it with `make test-olm-install`, which builds the binaries and names them in the environment.
// OLM_INSTALL_BUNDLE_DIR installs another bundle directory than bundle/ (to see the suite catch a
// broken one, for instance a CSV without a permission the manager uses).
package olminstall

import (
	"context"
	"maps"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// Polling of Eventually and Consistently; each call states its own timeout.
const poll = 250 * time.Millisecond

// labelSuite marks the namespaces the suite creates.
const labelSuite = "olminstall.oaat.io/suite"

var (
	env             testEnv
	cluster         *support.Cluster
	adminKubeconfig string
	adminCfg        *rest.Config
	k8sClient       client.Client // not cached: every assertion reads the API server itself
	clientset       kubernetes.Interface
	dynClient       dynamic.Interface
	objects         support.Objects // reads and writes OLM's objects through dynClient

	olmProc, catalogProc, opmProc *devkit.Process
	catalog                       *servedCatalog
)

func TestOLMInstall(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "OLM install Suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = loadEnv()
	Expect(err).NotTo(HaveOccurred())

	cluster = support.NewCluster(env.repoRoot, "olm-cluster", GinkgoWriter)
	// Registered before anything starts, so that whatever did start is stopped even when the
	// suite fails half-way through its set-up.
	DeferCleanup(tearDown)
	start := time.Now()
	var clients support.Clients
	adminKubeconfig, clients = support.StartSuiteCluster(ctx, cluster, poll, true)
	adminCfg, k8sClient, clientset, dynClient = clients.Config, clients.Client, clients.Clientset, clients.Dynamic
	objects = support.Objects{Dynamic: dynClient}

	step := time.Now()
	applyCRDs(ctx)
	GinkgoWriter.Printf("OLM and monitoring CRDs established in %s\n", time.Since(step).Round(time.Millisecond))

	step = time.Now()
	startOLM(ctx)
	catalog = serveCatalog(ctx)
	createCatalogSource(ctx, catalog)
	GinkgoWriter.Printf("OLM running and catalog READY in %s\n", time.Since(step).Round(time.Millisecond))
	AddReportEntry("set-up", "cluster, CRDs, OLM and catalog ready after "+time.Since(start).Round(time.Millisecond).String())
}, NodeTimeout(6*time.Minute))

// tearDown stops every process the suite started (the last started first: the manager, opm serve,
// catalog, olm; SIGTERM, then SIGKILL), then the cluster, and checks that no process of the run is
// left. Every step runs even when an earlier one fails; the failures are reported together.
func tearDown() {
	var problems []string
	procs := started.all()
	pids := map[string]int{}
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		pids[p.Name] = p.PID()
		if err := p.Stop(20 * time.Second); err != nil {
			problems = append(problems, err.Error())
		}
		if !p.Reaped() {
			problems = append(problems, "process left running: "+p.Name+" pid "+itoa(p.PID()))
		}
	}
	if catalog != nil && catalog.dir != "" {
		if err := os.RemoveAll(catalog.dir); err != nil {
			problems = append(problems, "removing the catalog directory: "+err.Error())
		}
	}
	if cluster != nil {
		clusterPIDs := cluster.PIDs()
		if err := cluster.Down(); err != nil {
			problems = append(problems, "stopping the local cluster: "+err.Error())
		}
		// cluster.sh takes a process for gone once its command line is empty, which happens a
		// moment before the kernel finishes its exit: give it that moment. Whatever the pid files
		// do not know of: anything still using the state directory.
		problems = append(problems, support.ProcessesLeft(clusterPIDs, cluster.StateDir, 10*time.Second)...)
		maps.Copy(pids, clusterPIDs)
	}
	GinkgoWriter.Printf("Stopped processes: %v\n", pids)
	Expect(problems).To(BeEmpty(), "tearing down the suite")
}

// expectRunning fails at once, with the end of its log, if one of OLM's processes or opm serve
// exited: waiting out a timeout would only hide the reason.
func expectRunning() {
	for _, p := range []*devkit.Process{olmProc, catalogProc, opmProc} {
		if err := p.UnexpectedExit(30); err != nil {
			StopTrying("a process of the suite exited").Wrap(err).Now()
		}
	}
}

// withoutCancel gives cleanup code a context of its own: the spec's may be what failed.
func withoutCancel(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), timeout)
}
