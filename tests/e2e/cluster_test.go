//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

// binaryVars name the binaries the suite runs: those cluster.sh starts (the Makefile's
// CLUSTER_ENV), kustomize, the manager and the kubectl-oaat plugin.
var binaryVars = []string{
	"KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER", "KUBE_SCHEDULER", "KUBECTL", "ETCD", "KWOK",
	"KUSTOMIZE", "MANAGER", "KUBECTL_OAAT",
}

// testPaths are the files the suite uses.
type testPaths struct {
	repoRoot  string
	kubectl   string
	kustomize string
	manager   string
	// kubectlOaat is the kubectl-oaat plugin.
	kubectlOaat string
	// clusterName names the local cluster's state directory (E2E_CLUSTER, default e2e-cluster):
	// the floor suite (make test-floor) starts one of its own beside another suite's.
	clusterName string
	// kubeVersion, when set (E2E_KUBE_VERSION), is the version the API server must report: the
	// floor suite's proof that it runs on the oldest supported Kubernetes.
	kubeVersion string
}

// loadPaths reads the binaries from the environment and fails, saying how to run the suite, when
// one is missing: the suite must not pass by testing nothing.
func loadPaths() (testPaths, error) {
	if err := devkit.RequireFiles(binaryVars...); err != nil {
		return testPaths{}, fmt.Errorf("%w. The end-to-end tests need the local cluster's binaries, kustomize and "+
			"bin/manager and bin/kubectl-oaat: run them with `make test-e2e`, which builds them and sets them", err)
	}
	// go test runs in the package's directory, tests/e2e.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return testPaths{}, err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return testPaths{}, fmt.Errorf("repository root not found from the working directory: %w", err)
	}
	clusterName := os.Getenv("E2E_CLUSTER")
	if clusterName == "" {
		clusterName = "e2e-cluster"
	}
	return testPaths{
		repoRoot:    root,
		clusterName: clusterName,
		kubeVersion: os.Getenv("E2E_KUBE_VERSION"),
		kubectl:     os.Getenv("KUBECTL"),
		kustomize:   os.Getenv("KUSTOMIZE"),
		manager:     os.Getenv("MANAGER"),

		kubectlOaat: os.Getenv("KUBECTL_OAAT"),
	}, nil
}

// operatorUser is the user name the operator's token authenticates as.
var operatorUser = devkit.ServiceAccountUser(operatorNamespace, operatorServiceAccount)

func itoa(i int) string { return strconv.Itoa(i) }

func joinLines(lines []string) string { return strings.Join(lines, "\n") }
