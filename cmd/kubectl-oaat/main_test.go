package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// controlPlaneVars name the binaries envtest starts; `make test` builds and sets them.
var controlPlaneVars = []string{"TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD", "TEST_ASSET_KUBECTL"}

var (
	// kubeconfig is the file the plugin reads, as a user's: it names the envtest API server.
	kubeconfig string
	// restConfig reaches the same API server, for tests that call the plugin's functions directly.
	restConfig *rest.Config
	// k8sClient plays the user's other tools and the operator: it creates groups and writes the
	// status of OaatRuns. It is not cached.
	k8sClient client.Client
)

// TestMain starts a real kube-apiserver and etcd with the CRDs for every test of the package, as
// no command can be tested without an API server. Missing binaries fail the tests: they must not
// pass by testing nothing.
func TestMain(m *testing.M) {
	code, err := runWithControlPlane(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

// runWithControlPlane runs the tests between the start and the stop of the control plane and
// returns their exit code, or why they could not run or the control plane could not stop.
func runWithControlPlane(m *testing.M) (code int, err error) {
	if err := devkit.RequireFiles(controlPlaneVars...); err != nil {
		return 0, fmt.Errorf("%w. The kubectl-oaat tests need a real kube-apiserver, etcd and kubectl: run them with "+
			"`make test`, which builds the binaries into bin/ and sets them", err)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	if restConfig, err = env.Start(); err != nil {
		return 0, fmt.Errorf("starting the envtest control plane: %w", err)
	}
	defer func() {
		if stopErr := env.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stopping the envtest control plane: %w", stopErr)
		}
	}()
	dir, err := os.MkdirTemp("", "kubectl-oaat-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		return 0, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		return 0, err
	}
	if k8sClient, err = client.New(restConfig, client.Options{Scheme: scheme}); err != nil {
		return 0, fmt.Errorf("connecting to the envtest control plane: %w", err)
	}
	return m.Run(), nil
}

// kubectlOaat runs `kubectl oaat --kubeconfig <kubeconfig> --namespace ns args...` in process and
// returns what it wrote to stdout and to stderr, and its error.
func kubectlOaat(ctx context.Context, ns string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	root := newRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs(append([]string{"--kubeconfig", kubeconfig, "--namespace", ns}, args...))
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// newNamespace creates a namespace of the test's own. No namespace controller runs to delete it:
// the control plane goes at the end.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kubectl-oaat-"}}
	if err := k8sClient.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	return ns.Name
}

// newGroup creates the OaatGroup name in ns with items; no operator runs, so its status stays empty.
func newGroup(t *testing.T, ns, name string, items ...string) *v1alpha1.OaatGroup {
	t.Helper()
	g := builders.Group(items...).Named(name).Namespace(ns).Frequency("").Obj()
	if err := k8sClient.Create(t.Context(), g); err != nil {
		t.Fatalf("creating OaatGroup %s: %v", name, err)
	}
	return g
}

// listRuns returns the OaatRuns of ns.
func listRuns(t *testing.T, ns string) []v1alpha1.OaatRun {
	t.Helper()
	runs := &v1alpha1.OaatRunList{}
	if err := k8sClient.List(t.Context(), runs, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing OaatRuns: %v", err)
	}
	return runs.Items
}

// setRunStatus writes the status of run as the operator would.
func setRunStatus(t *testing.T, run *v1alpha1.OaatRun, status v1alpha1.OaatRunStatus) {
	t.Helper()
	base := run.DeepCopy()
	run.Status = status
	if err := k8sClient.Status().Patch(t.Context(), run, client.MergeFrom(base)); err != nil {
		t.Fatalf("setting the status of OaatRun %s: %v", run.Name, err)
	}
}

// waitForOneRun waits until ns holds an OaatRun and returns it.
func waitForOneRun(t *testing.T, ns string) *v1alpha1.OaatRun {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if runs := listRuns(t, ns); len(runs) > 0 {
			return &runs[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no OaatRun appeared in namespace %s", ns)
	return nil
}
