// Package integration runs the OaatGroup reconciler in-process against a real kube-apiserver and
// etcd started by envtest. There is no kubelet, scheduler or controller-manager: the tests play
// the kubelet by writing pod status, and nothing collects garbage.
package integration

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/controllers"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/internal/leader"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// seed is the fixed random seed of the reconciler, so that tie-breaks are reproducible for a
// given group UID.
const seed = 20240601

// Timeouts of Eventually and Consistently unless a test says otherwise, and of a whole test.
const (
	timeout     = 20 * time.Second
	interval    = 100 * time.Millisecond
	specTimeout = time.Minute
)

// controlPlaneVars name the binaries envtest starts; `make test` builds and sets them.
var controlPlaneVars = []string{"TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD", "TEST_ASSET_KUBECTL"}

// leaseName is the name of the leader election Lease, as cmd/main.go names it.
const leaseName = "oaat-operator.oaat.io"

// labelTestPod marks the pods a test creates itself (rogue pods): they are not the operator's,
// so the overlap tracker leaves them out.
const labelTestPod = "integration.oaat.io/test-pod"

var (
	testEnv   *envtest.Environment
	cfg       *rest.Config
	scheme    *runtime.Scheme
	k8sClient client.Client // not cached: every assertion reads the API server itself
	clientset kubernetes.Interface

	// suiteDir is a directory of the process's own for the suite's duration (the plugin built once).
	suiteDir string
	// ns is the namespace of the running test, created for it alone.
	ns string
	// stopManager stops the manager of the running test and waits until it has stopped.
	stopManager func()
	// tracker records overlaps of live pods in ns, as podWatch feeds it.
	tracker  *support.OverlapTracker
	podWatch *support.PodWatch

	// runMetrics are the run metrics of every manager of the suite, as one process keeps them
	// across restarts of its manager; registry gathers them with the status collector.
	runMetrics = metrics.NewRunMetrics()
	registry   = prometheus.NewRegistry()
)

func TestIntegration(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Integration Suite")
}

var _ = BeforeSuite(func() {
	if err := checkControlPlaneVars(); err != nil {
		Fail(err.Error())
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)
	SetDefaultConsistentlyPollingInterval(interval)
	// The tests pass their spec context to Eventually; without this, a context lifts the timeout.
	EnforceDefaultTimeoutsWhenUsingContexts()

	suiteDir = GinkgoT().TempDir()
	scheme = runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))

	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred(), "starting the envtest control plane")
	DeferCleanup(func() {
		Expect(testEnv.Stop()).To(Succeed())
	})

	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	// The status and lock collectors read the API server directly here, where the operator reads its cache.
	Expect(metrics.Register(registry, runMetrics, metrics.NewStatusCollector(k8sClient, clock.RealClock{}))).To(Succeed())
	Expect(metrics.RegisterLocks(registry, metrics.NewLockMetrics(), metrics.NewLockCollector(k8sClient))).To(Succeed())
	clientset, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
})

// checkControlPlaneVars fails, saying how to run the suite, when the control plane binaries are
// not named by the environment: the suite must not pass by testing nothing.
func checkControlPlaneVars() error {
	if err := devkit.RequireFiles(controlPlaneVars...); err != nil {
		return fmt.Errorf("%w. The integration tests need a real kube-apiserver, etcd and kubectl: run them with "+
			"`make test`, which builds the binaries into bin/ and sets them", err)
	}
	return nil
}

// Every test gets its own namespace, a watcher of its pods and its own manager.
var _ = BeforeEach(func(ctx SpecContext) {
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "oaat-it-"}}
	Expect(k8sClient.Create(ctx, namespace)).To(Succeed())
	ns = namespace.Name

	tracker = support.NewOverlapTracker(support.OverlapTrackerOptions{TestPodLabel: labelTestPod})
	var err error
	podWatch, err = support.WatchPods(ctx, clientset, ns, tracker)
	Expect(err).NotTo(HaveOccurred())
	// The namespace is new: the watch starts from a list (so that no event is missed) that is empty.
	Expect(podWatch.Listed()).To(BeEmpty())
	stopManager = startManager()

	DeferCleanup(func(ctx SpecContext) {
		stopManager()
		// No namespace controller runs, so the namespace would stay Terminating: its objects are
		// deleted instead, so that later managers do not keep reconciling them.
		Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroup{}, client.InNamespace(ns))).To(Succeed())
		// With no manager to remove it, the finalizer oaat.io/history would keep them.
		dropHistoryFinalizers(ctx)
		Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroupHistory{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatLock{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8sClient.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns),
			client.GracePeriodSeconds(0))).To(Succeed())
		dropRunTrackingFinalizers(ctx)
	})
})

// The invariant of the operator, checked in every test: at most one live pod per group.
var _ = AfterEach(func() {
	Expect(podWatch.Stop()).To(Succeed(), "the overlap watcher did not see every pod event")
	Expect(tracker.Overlaps()).To(BeEmpty(), "two or more live pods of the same group coexisted")
})

// startManager starts a manager wired as cmd/main.go wires it, with its own context, and returns
// a function that stops it and waits until it has stopped. Given namespaces, it watches only
// those, as with WATCH_NAMESPACE.
func startManager(namespaces ...string) (stop func()) {
	return startManagerWith(managerOptions{namespaces: namespaces})
}

// managerOptions change how startManagerWith starts a manager.
type managerOptions struct {
	// namespaces are the namespaces watched, all when empty.
	namespaces []string
	// wrap, when not nil, wraps the manager's client (reads from the cache, writes to the API
	// server), so that a test can act between the operator's decision and its write, against the
	// real API server.
	wrap func(client.WithWatch) client.WithWatch
	// leaseNamespace, when not empty, runs the manager with leader election, its Lease in that
	// namespace, wired as cmd/main.go wires it.
	leaseNamespace string
	// workers, when not zero, is the manager's MaxConcurrentReconciles (4 otherwise).
	workers int
	// adoptionWindow, when not zero, is how long a new ClusterOaatLock gives no slot to a manager
	// of some namespaces (--cluster-lock-adoption-window; locks.DefaultAdoptionWindow otherwise).
	adoptionWindow time.Duration
	// historyRetention, when not zero, is how long a deleted group's OaatGroupHistory is kept
	// (--history-retention; history.DefaultRetention otherwise).
	historyRetention time.Duration
	// historyRefusalWait, when not zero, is how long a deleted group waits for the API server to
	// accept its refused OaatGroupHistory (--history-refusal-wait; history.DefaultRefusalWait
	// otherwise).
	historyRefusalWait time.Duration
	// notify says where the groups' transitions go (--notify-sink and
	// --notify-group-sink-prefixes); none by default.
	notify controllers.NotifyOptions
}

// startManagerWith is startManager with options.
func startManagerWith(o managerOptions) (stop func()) {
	newClient := client.New
	if o.wrap != nil {
		newClient = func(config *rest.Config, options client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(config, options)
			if err != nil {
				return nil, err
			}
			return o.wrap(c), nil
		}
	}
	var (
		lock     resourcelock.Interface
		identity *leader.Identity
	)
	if o.leaseNamespace != "" {
		l, id, err := leader.NewLock(cfg, o.leaseNamespace, leaseName)
		Expect(err).NotTo(HaveOccurred())
		lock, identity = l, &id
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		NewClient:                           newClient,
		Scheme:                              scheme,
		Metrics:                             metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:              "0",
		LeaderElection:                      lock != nil,
		LeaderElectionID:                    leaseName,
		LeaderElectionNamespace:             o.leaseNamespace,
		LeaderElectionResourceLockInterface: lock,
		LeaderElectionReleaseOnCancel:       true,
		Cache:                               controllers.CacheOptions(o.namespaces...),
		// A process may register a controller name once unless told otherwise; a restart
		// registers it again.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(controllers.Setup(mgr, controllers.Options{
		Clock: clock.RealClock{}, Seed: seed, Runs: runMetrics, MaxConcurrentReconciles: cmp.Or(o.workers, 4), Leader: identity,
		// As cmd/main.go sets it from WATCH_NAMESPACE.
		Namespaces: o.namespaces, AdoptionWindow: o.adoptionWindow, HistoryRetention: o.historyRetention,
		HistoryRefusalWait: o.historyRefusalWait, Notify: o.notify,
	})).To(Succeed())

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- mgr.Start(ctx)
	}()
	// The tests start once the manager watches everything its controller watches, so that a
	// manager is never stopped while it is still starting.
	for _, obj := range []client.Object{&v1alpha1.OaatGroup{}, &v1alpha1.OaatType{}, &corev1.Pod{}} {
		informer, err := mgr.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		Expect(err).NotTo(HaveOccurred())
		Eventually(informer.HasSynced, 30*time.Second).Should(BeTrue(), "the informer of %T did not sync", obj)
	}
	return func() {
		cancel()
		var err error
		Eventually(done, 30*time.Second).Should(Receive(&err), "the manager did not stop")
		Expect(err).NotTo(HaveOccurred(), "the manager stopped with an error")
	}
}

// restartManager stops the running manager and starts a new one, as a pod restart would.
func restartManager() {
	stopManager()
	stopManager = startManager()
}
