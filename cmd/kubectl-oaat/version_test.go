package main

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// kubectlOaatAllNamespaces runs `kubectl oaat --kubeconfig <kubeconfig> args...` in process, with
// no --namespace, and returns what it wrote to stdout and to stderr, and its error.
func kubectlOaatAllNamespaces(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs(append([]string{"--kubeconfig", kubeconfig}, args...))
	err = root.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

// The plugin of a plain go build says its version is unknown, and with --client does not reach
// the cluster.
func TestVersionClientOnly(t *testing.T) {
	t.Parallel()
	stdout, stderr, err := kubectlOaatAllNamespaces(t, "version", "--client", "--server", "https://127.0.0.1:1")
	if err != nil {
		t.Fatalf("version --client: %v (stderr %q)", err, stderr)
	}
	if !strings.HasPrefix(stdout, "Client Version: unknown (revision unknown, go") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("version --client printed %q, want the client's line alone", stdout)
	}
}

// Without an operator the client's version is printed all the same, then an error that says
// where the plugin looked, as kubectl version does when it cannot reach the API server.
func TestVersionWithoutOperator(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	stdout, _, err := kubectlOaat(t.Context(), ns, "version")
	if !strings.HasPrefix(stdout, "Client Version: ") {
		t.Errorf("stdout %q lacks the client's version", stdout)
	}
	want := `no Deployment labelled app.kubernetes.io/name=oaat-operator,control-plane=controller-manager in namespace "` + ns + `"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("version: error %v, want it to say %q", err, want)
	}
}

// A user who may not list Deployments in all namespaces is told to name the operator's.
func TestVersionForbidden(t *testing.T) {
	t.Parallel()
	stdout, _, err := kubectlOaatAllNamespaces(t, "version", "--as", "someone")
	if !strings.HasPrefix(stdout, "Client Version: ") {
		t.Errorf("stdout %q lacks the client's version", stdout)
	}
	if err == nil || !strings.Contains(err.Error(), "listing Deployments in all namespaces is forbidden, name the operator's namespace with --namespace") {
		t.Errorf("version --as someone: error %v, want a forbidden list", err)
	}
}
