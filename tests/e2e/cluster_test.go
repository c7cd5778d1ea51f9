//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// binaryVars name the binaries the suite runs: those cluster.sh starts (the Makefile's
// CLUSTER_ENV), kustomize and the manager.
var binaryVars = []string{
	"KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER", "KUBE_SCHEDULER", "KUBECTL", "ETCD", "KWOK",
	"KUSTOMIZE", "MANAGER",
}

// testPaths are the files the suite uses.
type testPaths struct {
	repoRoot  string
	kubectl   string
	kustomize string
	manager   string
}

// loadPaths reads the binaries from the environment and fails, saying how to run the suite, when
// one is missing: the suite must not pass by testing nothing.
func loadPaths() (testPaths, error) {
	if err := support.RequireFiles(binaryVars...); err != nil {
		return testPaths{}, fmt.Errorf("%w. The end-to-end tests need the local cluster's binaries, kustomize and "+
			"bin/manager: run them with `make test-e2e`, which builds them and sets them", err)
	}
	// go test runs in the package's directory, tests/e2e.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return testPaths{}, err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return testPaths{}, fmt.Errorf("repository root not found from the working directory: %w", err)
	}
	return testPaths{
		repoRoot:  root,
		kubectl:   os.Getenv("KUBECTL"),
		kustomize: os.Getenv("KUSTOMIZE"),
		manager:   os.Getenv("MANAGER"),
	}, nil
}

// applyLocalConfig applies config/local (CRDs, RBAC, the operator's ServiceAccount) as the admin,
// server-side as `make install` does: the CRDs are too large for client-side apply.
func applyLocalConfig(ctx context.Context, kubeconfig string) {
	build := exec.CommandContext(ctx, paths.kustomize, "build", filepath.Join(paths.repoRoot, "config", "local"))
	var manifests, stderr bytes.Buffer
	build.Stdout, build.Stderr = &manifests, &stderr
	Expect(build.Run()).To(Succeed(), "kustomize build config/local: %s", stderr.String())

	apply := exec.CommandContext(ctx, paths.kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", "-")
	apply.Stdin = &manifests
	out, err := apply.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl apply --server-side of config/local:\n%s", out)
	GinkgoWriter.Printf("Applied config/local:\n%s", out)
}

// writeOperatorKubeconfig writes a kubeconfig with a token of the operator's ServiceAccount, so
// that the operator runs with exactly the permissions config/rbac grants it. The token outlives
// the suite (go test -timeout); the API server may extend it.
func writeOperatorKubeconfig(ctx context.Context, adminKubeconfig string) string {
	path := filepath.Join(cluster.StateDir, "operator.kubeconfig")
	Expect(support.WriteServiceAccountKubeconfig(ctx, clientset, adminKubeconfig, operatorNamespace, operatorServiceAccount,
		path, 2*time.Hour)).To(Succeed())
	return path
}

// operatorUser is the user name the operator's token authenticates as.
var operatorUser = support.ServiceAccountUser(operatorNamespace, operatorServiceAccount)

func itoa(i int) string { return strconv.Itoa(i) }

func joinLines(lines []string) string { return strings.Join(lines, "\n") }
