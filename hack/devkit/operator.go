package devkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// Where config/local puts the operator's identity; its leader-election Lease goes there too, where
// config/rbac lets the ServiceAccount manage Leases.
const (
	OperatorNamespace      = "oaat-operator-system"
	OperatorServiceAccount = "oaat-operator-controller-manager"
)

// LocalOperator is what running the manager outside the cluster as its ServiceAccount needs
// (make demo through hack/local-operator, the end-to-end suite, the perf programs): the
// binaries that apply config/local, and the cluster's admin kubeconfig.
type LocalOperator struct {
	// Kustomize and Kubectl are the binaries.
	Kustomize, Kubectl string
	// RepoRoot is the repository's root, where config/local is.
	RepoRoot string
	// AdminKubeconfig is the cluster's admin kubeconfig.
	AdminKubeconfig string
	// Log receives progress and the output of kubectl; nil discards it.
	Log io.Writer
}

// Prepare applies config/local (the CRDs, the RBAC and the operator's ServiceAccount) as the
// admin, server-side as `make install` does (the CRDs are too large for a client-side apply),
// waits until the CRDs are Established, and writes to path a kubeconfig with a token of the
// operator's ServiceAccount valid for ttl (see WriteServiceAccountKubeconfig). Preparing again
// hands a manager that runs with path a fresh token, without a restart.
func (o LocalOperator) Prepare(ctx context.Context, path string, ttl time.Duration) error {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	build := exec.CommandContext(ctx, o.Kustomize, "build", filepath.Join(o.RepoRoot, "config", "local"))
	var manifests, stderr bytes.Buffer
	build.Stdout, build.Stderr = &manifests, &stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("kustomize build config/local: %w\n%s", err, stderr.String())
	}
	crds, err := crdNames(manifests.Bytes())
	if err != nil {
		return err
	}
	if err := o.kubectl(ctx, &manifests, log, "apply", "--server-side", "-f", "-"); err != nil {
		return fmt.Errorf("applying config/local: %w", err)
	}
	args := append([]string{"wait", "--for=condition=Established", "--timeout=60s"}, crds...)
	if err := o.kubectl(ctx, nil, log, args...); err != nil {
		return fmt.Errorf("waiting for the CRDs to be Established: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.AdminKubeconfig)
	if err != nil {
		return err
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := WriteServiceAccountKubeconfig(ctx, admin, o.AdminKubeconfig, OperatorNamespace, OperatorServiceAccount, path, ttl); err != nil {
		return err
	}
	fmt.Fprintf(log, "Applied config/local; wrote %s, a token of %s/%s valid %s\n", path, OperatorNamespace, OperatorServiceAccount, ttl)
	return nil
}

// crdNames returns the CRDs of a stream of manifests, as kubectl names them (crd/NAME).
func crdNames(manifests []byte) ([]string, error) {
	var names []string
	for _, doc := range bytes.Split(manifests, []byte("\n---\n")) {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("reading the manifests of config/local: %w", err)
		}
		if obj.Kind == "CustomResourceDefinition" {
			names = append(names, "crd/"+obj.Metadata.Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("config/local holds no CustomResourceDefinition")
	}
	return names, nil
}

// kubectl runs kubectl as the admin, its output to log; its error carries the output.
func (o LocalOperator) kubectl(ctx context.Context, stdin io.Reader, log io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, o.Kubectl, append([]string{"--kubeconfig", o.AdminKubeconfig}, args...)...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	_, _ = log.Write(out)
	if err != nil {
		return fmt.Errorf("kubectl %s: %w\n%s", args[0], err, out)
	}
	return nil
}

// ManagerFlags are the manager's command-line flags when it runs outside the cluster as the
// operator's ServiceAccount: make demo (hack/local-operator), the end-to-end suites and the perf
// programs build its command line here.
type ManagerFlags struct {
	// Kubeconfig holds a token of the operator's ServiceAccount (LocalOperator.Prepare).
	Kubeconfig string
	// MetricsAddr is --metrics-bind-address: host:port, or "0" to serve no metrics.
	MetricsAddr string
	// MetricsInsecure serves the metrics over plain HTTP without authorization
	// (--metrics-secure=false), for programs that read them on the loopback address.
	MetricsInsecure bool
	// ProbeAddr is --health-probe-bind-address, host:port.
	ProbeAddr string
	// LeaderElect runs with leader election, its Lease in OperatorNamespace, where config/rbac
	// lets the ServiceAccount manage Leases.
	LeaderElect bool
	// Extra are further flags, appended as given.
	Extra []string
}

// Args returns the flags as the manager's arguments.
func (f ManagerFlags) Args() []string {
	args := []string{"--kubeconfig", f.Kubeconfig, "--metrics-bind-address", f.MetricsAddr}
	if f.MetricsInsecure {
		args = append(args, "--metrics-secure=false")
	}
	args = append(args, "--health-probe-bind-address", f.ProbeAddr)
	if f.LeaderElect {
		args = append(args, "--leader-elect", "--leader-election-namespace", OperatorNamespace)
	}
	return append(args, f.Extra...)
}
