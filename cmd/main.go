// Command manager runs oaat-operator: the controller that runs the items of each OaatGroup one at
// a time.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"
	// Blackout windows name IANA time zones: the image may have no zone database of its own.
	_ "time/tzdata"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/controllers"
	"github.com/oaat-io/oaat-operator/internal/history"
	"github.com/oaat-io/oaat-operator/internal/leader"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/metricsauth"
	"github.com/oaat-io/oaat-operator/internal/version"
)

func main() {
	var (
		metricsAddr, probeAddr     string
		pprofAddr                  string
		secureMetrics, enableHTTP2 bool
		printVersion               bool
		leaderElect                bool
		leaderElectionNamespace    string
		seed                       uint64
		concurrency                int
		adoptionWindow             time.Duration
		historyRetention           time.Duration
		historyRefusalWait         time.Duration
		notifySink                 string
		notifyGroupSinkPrefixes    string
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to: :8443 for HTTPS, :8080 for HTTP, 0 to disable it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the health probe endpoint binds to.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "0",
		"The address Go's profiles (/debug/pprof/) are served on, without authentication: 127.0.0.1:port for a "+
			"measurement on the operator's host (make bench reads its heap there), 0 to serve none.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS with authentication and authorization; false serves plain HTTP.")
	flag.BoolVar(&enableHTTP2, "enable-http2", false,
		"Enable HTTP/2 for the metrics server (off by default: HTTP/2 Stream Cancellation and Rapid Reset CVEs).")
	flag.BoolVar(&leaderElect, "leader-elect", false,
		"Elect a leader among replicas, so that only one reconciles at a time.")
	flag.StringVar(&leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election lease; empty means the namespace the operator runs in.")
	flag.IntVar(&concurrency, "max-concurrent-reconciles", 4,
		"How many OaatGroups are reconciled at once; one group is never reconciled by two workers at a time.")
	flag.DurationVar(&adoptionWindow, "cluster-lock-adoption-window", locks.DefaultAdoptionWindow,
		"How long a ClusterOaatLock gives no slot after its creation when the operator watches only some namespaces "+
			"(WATCH_NAMESPACE): the time other installations sharing it have to list their live runs in it again "+
			"after a re-create, a failover included.")
	flag.DurationVar(&historyRetention, "history-retention", history.DefaultRetention,
		"How long the history of a deleted OaatGroup is kept (an OaatGroupHistory) for a group re-created with "+
			"the same namespace and name to adopt; deleted at its end.")
	flag.DurationVar(&historyRefusalWait, "history-refusal-wait", history.DefaultRefusalWait,
		"How long a deleted OaatGroup waits for the API server to accept its OaatGroupHistory once it refused it for good "+
			"(an exhausted ResourceQuota, an admission webhook or policy): tried again meanwhile, then the group goes without it, "+
			"with a Warning event HistoryLost. A refusal by the operator's own rights does not wait.")
	flag.StringVar(&notifySink, "notify-sink", os.Getenv("OAAT_NOTIFY_SINK"),
		"URL of a sink every group's transitions are sent to as CloudEvents (runs failed, items parked, circuit breaker "+
			"opened and closed, AtRisk); empty sends none. A bearer token, when needed, is the key token of the Secret "+
			v1alpha1.NotifyTokenSecret+" in the operator's namespace, the one Secret the operator may read.")
	flag.StringVar(&notifyGroupSinkPrefixes, "notify-group-sink-prefixes", os.Getenv("OAAT_NOTIFY_GROUP_SINK_PREFIXES"),
		"Comma-separated URL prefixes a group's own sink (spec.notify.sink) may start with; empty refuses every group's sink "+
			"(the operator then sends nothing on a group's behalf, so that a group cannot make it reach an address its author cannot).")
	flag.Uint64Var(&seed, "random-seed", 0,
		"Seed of the random tie-breaks between equally due items; 0 picks one at start.")
	flag.BoolVar(&printVersion, "version", false,
		"Print the manager's version, the commit it was built from and its Go version, then exit.")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	if printVersion {
		fmt.Println("oaat-operator manager " + version.Get().String())
		os.Exit(0)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	setupLog := ctrl.Log.WithName("setup")
	if adoptionWindow <= 0 {
		setupLog.Error(fmt.Errorf("--cluster-lock-adoption-window=%s", adoptionWindow), "The adoption window of a ClusterOaatLock must be positive")
		os.Exit(1)
	}
	if historyRefusalWait <= 0 {
		setupLog.Error(fmt.Errorf("--history-refusal-wait=%s", historyRefusalWait), "The wait for a refused history record must be positive")
		os.Exit(1)
	}
	if historyRetention <= 0 {
		setupLog.Error(fmt.Errorf("--history-retention=%s", historyRetention), "The retention of a deleted group's history must be positive")
		os.Exit(1)
	}

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))

	var tlsOpts []func(*tls.Config)
	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{BindAddress: metricsAddr, SecureServing: secureMetrics, TLSOpts: tlsOpts}
	if secureMetrics {
		metricsOpts.FilterProvider = metricsauth.Filter
	}

	// OLM sets WATCH_NAMESPACE from the OperatorGroup's target namespaces (empty: all).
	watchNamespaces := controllers.WatchNamespaces(os.Getenv("WATCH_NAMESPACE"))
	cfg := ctrl.GetConfigOrDie()
	// The manager elects its leader with a lock of a known identity, so that the reconciler can
	// check the Lease before each pod it creates (controller-runtime does not expose its elector).
	var (
		lock     resourcelock.Interface
		identity *leader.Identity
	)
	if leaderElect {
		l, id, err := leader.NewLock(cfg, leaderElectionNamespace, v1alpha1.LeaderElectionID)
		if err != nil {
			setupLog.Error(err, "Cannot create the leader election lock")
			os.Exit(1)
		}
		lock, identity = l, &id
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                              scheme,
		Metrics:                             metricsOpts,
		HealthProbeBindAddress:              probeAddr,
		PprofBindAddress:                    pprofAddr,
		LeaderElection:                      leaderElect,
		LeaderElectionID:                    v1alpha1.LeaderElectionID,
		LeaderElectionNamespace:             leaderElectionNamespace,
		LeaderElectionResourceLockInterface: lock,
		LeaderElectionReleaseOnCancel:       true,
		// A standby tries for the Lease every RetryPeriod: 1 s rather than controller-runtime's
		// 2 s, so that a failover after a leader's crash takes the 15 s LeaseDuration plus at
		// most about 2 s (one retry to see the last renewal, one to take the expired Lease), at
		// the cost of one Lease write a second while leading.
		RetryPeriod: ptr.To(time.Second),
		Cache:       controllers.CacheOptions(watchNamespaces...),
	})
	if err != nil {
		setupLog.Error(err, "Cannot create the manager")
		os.Exit(1)
	}
	if seed == 0 {
		seed = rand.Uint64()
	}
	runs := metrics.NewRunMetrics()
	if err := metrics.Register(ctrlmetrics.Registry, runs, metrics.NewStatusCollector(mgr.GetCache(), clock.RealClock{})); err != nil {
		setupLog.Error(err, "Cannot register the metrics")
		os.Exit(1)
	}
	lockMetrics := metrics.NewLockMetrics()
	if err := metrics.RegisterLocks(ctrlmetrics.Registry, lockMetrics, metrics.NewLockCollector(mgr.GetCache())); err != nil {
		setupLog.Error(err, "Cannot register the lock metrics")
		os.Exit(1)
	}
	notifyMetrics := metrics.NewNotifyMetrics()
	if err := metrics.RegisterNotify(ctrlmetrics.Registry, notifyMetrics); err != nil {
		setupLog.Error(err, "Cannot register the notification metrics")
		os.Exit(1)
	}
	if err := controllers.Setup(mgr, controllers.Options{
		Clock: clock.RealClock{}, Seed: seed, Runs: runs, MaxConcurrentReconciles: concurrency, Leader: identity,
		LockMetrics: lockMetrics, Namespaces: watchNamespaces, AdoptionWindow: adoptionWindow,
		HistoryRetention: historyRetention, HistoryRefusalWait: historyRefusalWait,
		Notify: notifyOptions(notifySink, notifyGroupSinkPrefixes, leaderElectionNamespace, notifyMetrics, mgr.GetAPIReader(), setupLog),
		// Losing the Lease ends the process, as the elector's own OnStoppedLeading does; the
		// Lease check notices it before the elector's renew deadline.
		OnLeaseLost: func(err error) {
			setupLog.Error(err, "Lost the leader election lease; exiting")
			os.Exit(1)
		},
	}); err != nil {
		setupLog.Error(err, "Cannot set up the controllers")
		os.Exit(1)
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("caches", controllers.CachesSynced(mgr.GetCache())))

	setupLog.Info("Starting manager", "randomSeed", seed, "watchNamespaces", watchNamespaces)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "Manager stopped with an error")
		os.Exit(1)
	}
}
