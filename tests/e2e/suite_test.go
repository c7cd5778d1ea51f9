//go:build e2e

// Package e2e tests the operator end to end, as it runs for real: a local cluster of its own
// (hack/cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, which
// plays out each pod's life from its oaat.io/test-* annotations), config/local applied to it, and
// bin/manager started as a separate process that authenticates with a token of its
// ServiceAccount, so that it holds exactly the permissions config/rbac grants it. The operator
// serves its metrics over HTTPS with authentication and authorization, and a real Prometheus
// scrapes them every second with a token of a ServiceAccount bound to the metrics-reader role; it
// evaluates the bundle's alerts (their times divided by support.AlertScale) and sends them to a
// real Alertmanager, configured with the route of docs/metrics-and-alerts.md, which notifies a
// webhook receiver of the suite.
//
// Run it with `make test-e2e`, which builds the binaries and names them in the environment.
package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// Where config/local puts the operator's identity, and the lease it elects a leader with.
const (
	operatorNamespace      = devkit.OperatorNamespace
	operatorServiceAccount = devkit.OperatorServiceAccount
)

// Labels the suite puts on what it creates.
const (
	// labelSuite marks the namespaces of the tests, so that a later run finds those an aborted
	// run left behind.
	labelSuite = "e2e.oaat.io/suite"
	// labelTestPod marks pods a test creates itself (rogue pods): they are not the operator's, so
	// the overlap watcher leaves them out.
	labelTestPod = "e2e.oaat.io/test-pod"
)

// Polling of Eventually and Consistently; each call states its own timeout.
const poll = 200 * time.Millisecond

var (
	paths    testPaths
	cluster  *support.Cluster
	operator *operatorProcess
	prom     *prometheusProcess
	// sink is a CloudEvents receiver on an address the operator allows as a group's sink
	// (--notify-group-sink-prefixes); the first process's, not listening until a spec starts it.
	sink      *support.EventReceiver
	k8sClient client.Client // not cached: every assertion reads the API server itself
	// adminKubeconfig is the cluster's admin kubeconfig, for the commands a test runs.
	adminKubeconfig string
	clientset       kubernetes.Interface
	// tracker records, from podWatch, the live pods of every group of the cluster and their
	// overlaps, and keeps each group's pods.
	tracker  *support.OverlapTracker
	podWatch *support.PodWatch

	// ns is the namespace of the running test, created for it alone.
	ns string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "End-to-end Suite")
}

// sharedSuite is what the first Ginkgo process, which starts the cluster, the operator and
// Prometheus, tells the others (make test-e2e runs E2E_PROCS processes).
type sharedSuite struct {
	AdminKubeconfig string
	OperatorLog     string
	// MetricsURL is the operator's metrics endpoint, kept when the operator restarts.
	MetricsURL    string
	OperatorPID   int
	PrometheusPID int
}

// shared is the first process's sharedSuite, on every process.
var shared sharedSuite

// The first process starts the cluster, the operator and Prometheus; every process then gets its
// clients and its own watcher of every pod of the cluster. The specs that stop or restart the
// operator, scrape it or query Prometheus are Serial: Ginkgo runs them on the first process, which
// holds operator and prom, once the parallel specs have ended.
var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	var err error
	paths, err = loadPaths()
	Expect(err).NotTo(HaveOccurred())

	cluster = support.NewCluster(paths.repoRoot, paths.clusterName, GinkgoWriter)
	// Registered before anything starts, so that whatever did start is stopped even when the
	// suite fails half-way through its set-up (after every process has ended, on this one).
	DeferCleanup(tearDown)
	start := time.Now()
	kubeconfig, clients := support.StartSuiteCluster(ctx, cluster, poll, false)
	k8sClient, clientset, adminKubeconfig = clients.Client, clients.Clientset, kubeconfig
	if paths.kubeVersion != "" {
		server, err := clientset.Discovery().ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		Expect(server.GitVersion).To(Equal(paths.kubeVersion), "the API server's version (E2E_KUBE_VERSION)")
		csv, err := os.ReadFile(filepath.Join(paths.repoRoot, "config", "manifests", "bases", "oaat-operator.clusterserviceversion.yaml"))
		Expect(err).NotTo(HaveOccurred())
		claimed := regexp.MustCompile(`(?m)^\s+minKubeVersion: (\d+\.\d+)\.\d+$`).FindSubmatch(csv)
		Expect(claimed).NotTo(BeNil(), "the CSV's minKubeVersion")
		Expect(server.Major+"."+server.Minor).To(Equal(string(claimed[1])), "the API server's minor, the one the CSV claims as its oldest")
		GinkgoWriter.Printf("API server %s\n", server.GitVersion)
	}

	support.RemoveSuiteNamespaces(ctx, k8sClient, labelSuite)
	// The token outlives the suite (go test -timeout); the API server may extend it.
	operatorKubeconfig := filepath.Join(cluster.StateDir, "operator.kubeconfig")
	Expect(devkit.LocalOperator{
		Kustomize: paths.kustomize, Kubectl: paths.kubectl, RepoRoot: paths.repoRoot,
		AdminKubeconfig: kubeconfig, Log: GinkgoWriter,
	}.Prepare(ctx, operatorKubeconfig, 2*time.Hour)).To(Succeed())

	sinkPort, err := devkit.FreePort()
	Expect(err).NotTo(HaveOccurred())
	sink = support.NewEventReceiver("127.0.0.1:" + strconv.Itoa(sinkPort))
	operator = &operatorProcess{
		binary:     paths.manager,
		kubeconfig: operatorKubeconfig,
		logPath:    filepath.Join(cluster.StateDir, "logs", "oaat-operator.log"),
	}
	Expect(os.Remove(operator.logPath)).To(Or(Succeed(), MatchError(os.ErrNotExist)),
		"the log of the last run is replaced, so that the final check for forbidden requests reads this run's only")
	startOperator(ctx)
	// The lease of the last run was released when it stopped, or expires within 15 s; the tests
	// start once this operator leads, so that their timeouts do not include that wait.
	waitForLeadership(ctx)
	promStart := time.Now()
	startPrometheus(ctx)
	GinkgoWriter.Printf("Prometheus ready after %s\n", time.Since(promStart).Round(time.Millisecond))
	GinkgoWriter.Printf("Suite ready after %s; operator log %s\n", time.Since(start).Round(time.Millisecond), operator.logPath)
	data, err := json.Marshal(sharedSuite{
		AdminKubeconfig: kubeconfig, OperatorLog: operator.logPath, MetricsURL: operator.metricsURL(),
		OperatorPID: operator.pid(), PrometheusPID: prom.pid(),
	})
	Expect(err).NotTo(HaveOccurred())
	return data
}, func(ctx SpecContext, data []byte) {
	Expect(json.Unmarshal(data, &shared)).To(Succeed())
	var err error
	if paths.repoRoot == "" {
		paths, err = loadPaths()
		Expect(err).NotTo(HaveOccurred())
	}
	SetDefaultEventuallyPollingInterval(poll)
	SetDefaultConsistentlyPollingInterval(poll)
	clients, err := support.NewClients(shared.AdminKubeconfig)
	Expect(err).NotTo(HaveOccurred())
	k8sClient, clientset, adminKubeconfig = clients.Client, clients.Clientset, shared.AdminKubeconfig

	tracker = support.NewOverlapTracker(support.OverlapTrackerOptions{TestPodLabel: labelTestPod, KeepHistory: true})
	podWatch, err = support.WatchPods(ctx, clientset, metav1.NamespaceAll, tracker)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		Expect(podWatch.Stop()).To(Succeed(), "the overlap watcher")
	})
}, NodeTimeout(5*time.Minute))

// tearDown stops Prometheus, Alertmanager, the operator and the cluster, then checks that no
// process of the run is left (Prometheus and Alertmanager included) and that the operator was
// never refused a request. Every step runs even when an earlier one fails; the failures are
// reported together at the end.
func tearDown(_ SpecContext) {
	var problems []string
	var operatorPID int
	prometheusPID, alertmanagerPID := prom.pid(), alerts.pid()
	if prom != nil {
		if err := prom.stop(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := alerts.stop(); err != nil {
		problems = append(problems, "stopping Alertmanager: "+err.Error())
	}
	if operator != nil {
		operatorPID = operator.pid()
		if err := operator.stop(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	pids := cluster.PIDs()
	if err := cluster.Down(); err != nil {
		problems = append(problems, "stopping the local cluster: "+err.Error())
	}
	if operatorPID != 0 {
		pids["oaat-operator"] = operatorPID
	}
	if prometheusPID != 0 {
		pids["prometheus"] = prometheusPID
	}
	if alertmanagerPID != 0 {
		pids["alertmanager"] = alertmanagerPID
	}
	// cluster.sh takes a process for gone once its command line is empty, a moment before the
	// kernel finishes its exit: ProcessesLeft gives it that moment.
	problems = append(problems, support.ProcessesLeft(pids, cluster.StateDir, 10*time.Second)...)
	GinkgoWriter.Printf("Stopped processes: %v\n", pids)
	if operator != nil {
		if lines, err := forbiddenLines(operator.logPath, GinkgoWriter); err != nil {
			problems = append(problems, err.Error())
		} else if len(lines) > 0 {
			problems = append(problems, "the operator was refused requests (a missing RBAC permission?), in "+
				operator.logPath+":\n"+joinLines(lines))
		}
	}
	Expect(problems).To(BeEmpty(), "tearing down the suite")
}

// Every test gets a namespace of its own; the watcher's findings for it are checked after it.
var _ = BeforeEach(func(ctx SpecContext) {
	namespace := support.CreateSuiteNamespace(ctx, k8sClient, "oaat-e2e-", labelSuite)
	ns = namespace.Name
	DeferCleanup(func(ctx SpecContext) {
		// The groups go first, so that the operator does not react to the deletion of their
		// OaatTypes (Ready False, an event) while the namespace is terminating.
		Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroup{}, client.InNamespace(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			groups := &v1alpha1.OaatGroupList{}
			g.Expect(k8sClient.List(ctx, groups, client.InNamespace(ns))).To(Succeed())
			g.Expect(groups.Items).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		err := k8sClient.Delete(ctx, namespace)
		Expect(client.IgnoreNotFound(err)).To(Succeed())
	})
	// The ServiceAccount admission plugin refuses pods until the namespace's default
	// ServiceAccount exists; the controller-manager makes it.
	Eventually(func() error {
		_, err := clientset.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "the default ServiceAccount of %s", ns)
})

// The invariant of the operator, checked in every test: at most one live pod per group, at every
// instant the watcher saw. And the operator must still run, unless the test stopped it, and so
// must Prometheus.
var _ = AfterEach(func(ctx SpecContext) {
	overlaps := tracker.OverlapsIn(ns)
	exited, promExited := operator.unexpectedExit(), prom.unexpectedExit()
	if operator == nil { // a process other than the first: the first one's processes must still run
		exited, promExited = stillRunning("the operator", shared.OperatorPID), stillRunning("Prometheus", shared.PrometheusPID)
	}
	if CurrentSpecReport().Failed() || len(overlaps) > 0 || exited != nil || promExited != nil {
		dumpDiagnostics(ctx, ns)
	}
	Expect(overlaps).To(BeEmpty(), "two or more live pods of the same group coexisted")
	Expect(exited).NotTo(HaveOccurred(), "the operator exited during the test; log %s", shared.OperatorLog)
	Expect(promExited).NotTo(HaveOccurred(), "Prometheus exited during the test")
	Expect(podWatch.Err()).NotTo(HaveOccurred(), "the overlap watcher may have missed pod events")
})

// stillRunning fails when the process pid, started by the first Ginkgo process, is gone: the
// parallel specs run while no Serial spec stops the operator, so its pid stays the same.
func stillRunning(what string, pid int) error {
	if pid == 0 || !devkit.ProcessAlive(pid) {
		return fmt.Errorf("%s (pid %d) is not running", what, pid)
	}
	return nil
}
