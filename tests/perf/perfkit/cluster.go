package perfkit

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// Env is a local cluster of the program's own, with config/local applied and a kubeconfig that
// authenticates as the operator's ServiceAccount.
type Env struct {
	// Root is the repository's root.
	Root string
	// Cluster is the local cluster (hack/cluster/cluster.sh) in .state/<name>.
	Cluster *support.Cluster
	// Admin is the admin's rest config, without client-side rate limiting, so that what the
	// programs measure is never their own throttling.
	Admin *rest.Config
	// Clientset and Client act as the admin; Client reads the API server, not a cache.
	Clientset kubernetes.Interface
	Client    client.Client
	// OperatorKubeconfig authenticates as the operator's ServiceAccount.
	OperatorKubeconfig string
	// Log receives progress.
	Log io.Writer
}

// StartCluster purges the cluster in .state/<name> (a measurement starts from an empty cluster),
// starts it with nodes fake Nodes, applies config/local and mints the operator's kubeconfig
// (devkit.LocalOperator). The binaries come from the environment, as make passes them.
func StartCluster(ctx context.Context, root, name string, nodes int, log io.Writer) (*Env, error) {
	if err := devkit.RequireFiles("KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER", "KUBE_SCHEDULER",
		"KUBECTL", "ETCD", "KWOK", "KUSTOMIZE", "MANAGER"); err != nil {
		return nil, fmt.Errorf("%w: run this through make", err)
	}
	if err := os.Setenv("OAAT_CLUSTER_NODES", strconv.Itoa(nodes)); err != nil {
		return nil, err
	}
	e := &Env{Root: root, Cluster: support.NewCluster(root, name, log), Log: log}
	if err := e.Cluster.Purge(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	kubeconfig, err := e.Cluster.Up(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "cluster %s up with %d nodes in %s\n", e.Cluster.StateDir, nodes, time.Since(start).Round(time.Second))
	if e.Admin, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		return nil, err
	}
	e.Admin.QPS = -1
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if e.Client, err = client.New(e.Admin, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	if e.Clientset, err = kubernetes.NewForConfig(e.Admin); err != nil {
		return nil, err
	}
	if e.OperatorKubeconfig, err = e.prepareOperator(ctx, kubeconfig); err != nil {
		return nil, err
	}
	return e, nil
}

// prepareOperator applies config/local, waits for the CRDs and writes a kubeconfig with a token of
// the operator's ServiceAccount, as hack/local-operator prepare does; it returns its path.
func (e *Env) prepareOperator(ctx context.Context, kubeconfig string) (string, error) {
	path := filepath.Join(e.Cluster.StateDir, "operator", "kubeconfig")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	local := devkit.LocalOperator{
		Kustomize: os.Getenv("KUSTOMIZE"), Kubectl: os.Getenv("KUBECTL"), RepoRoot: e.Root,
		AdminKubeconfig: kubeconfig, Log: e.Log,
	}
	return path, local.Prepare(ctx, path, 24*time.Hour)
}

// Namespace creates a namespace and waits for its default ServiceAccount, without which the
// ServiceAccount admission plugin refuses pods.
func (e *Env) Namespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.Client.Create(ctx, ns); err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := e.Clientset.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// ManagerLog returns the path of a log file named name in the cluster's log directory.
func (e *Env) ManagerLog(name string) string {
	return filepath.Join(e.Cluster.StateDir, "logs", name+".log")
}

// Stop stops the cluster and keeps its state for inspection.
func (e *Env) Stop() error { return e.Cluster.Down() }
