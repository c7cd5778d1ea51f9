//go:build olminstall

package olminstall

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

// envVars name what the suite runs and reads: the binaries cluster.sh starts (the Makefile's
// CLUSTER_ENV), OLM's two operators, opm, the manager, and the directories that hold OLM's CRDs and
// the Prometheus Operator's.
var envVars = []string{
	"KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER", "KUBE_SCHEDULER", "KUBECTL", "ETCD", "KWOK",
	"OLM", "CATALOG_OPERATOR", "OPM", "MANAGER", "OLM_CRDS_DIR", "MONITORING_CRDS_DIR",
}

// testEnv holds the paths the suite uses.
type testEnv struct {
	repoRoot        string
	kubectl         string
	olm             string
	catalogOperator string
	opm             string
	manager         string
	// olmCRDs is the crds directory of github.com/operator-framework/api (the version OLM is built
	// with); monitoringCRDs the example/prometheus-operator-crd directory of the Prometheus
	// Operator's module.
	olmCRDs        string
	monitoringCRDs string
	// bundle is the bundle directory: <repo>/bundle, or OLM_INSTALL_BUNDLE_DIR if set (to check
	// that the suite catches a broken bundle, for instance a CSV that lacks a permission).
	bundle string
}

// loadEnv reads the paths from the environment and fails, saying how to run the suite, when one
// is missing: the suite must never pass, or skip, by testing nothing.
func loadEnv() (testEnv, error) {
	if err := devkit.RequireFiles(envVars...); err != nil {
		return testEnv{}, fmt.Errorf("%w. The OLM install test needs the local cluster's binaries, olm, catalog, opm, "+
			"bin/manager and the CRD directories: run it with `make test-olm-install`, which builds them and sets them", err)
	}
	// go test runs in the package's directory, tests/olminstall.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return testEnv{}, err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return testEnv{}, fmt.Errorf("repository root not found from the working directory: %w", err)
	}
	return testEnv{
		repoRoot:        root,
		kubectl:         os.Getenv("KUBECTL"),
		olm:             os.Getenv("OLM"),
		catalogOperator: os.Getenv("CATALOG_OPERATOR"),
		opm:             os.Getenv("OPM"),
		manager:         os.Getenv("MANAGER"),
		olmCRDs:         os.Getenv("OLM_CRDS_DIR"),
		monitoringCRDs:  os.Getenv("MONITORING_CRDS_DIR"),
		bundle:          cmp.Or(os.Getenv("OLM_INSTALL_BUNDLE_DIR"), filepath.Join(root, "bundle")),
	}, nil
}

// ---------------------------------------------------------------------------------------------
// Processes the suite starts itself: olm, catalog, opm serve, the manager.

// startProcess starts binary with args and env (added to the suite's environment), its output
// appended to logPath, and adds it to started.
func startProcess(name, logPath string, env []string, binary string, args ...string) (*devkit.Process, error) {
	p, err := devkit.StartProcess(devkit.ProcessSpec{
		Name: name, Binary: binary, Args: args, Env: env, LogPath: logPath, Log: GinkgoWriter,
	})
	if err != nil {
		return nil, err
	}
	started.add(p)
	return p, nil
}

// processList is every process the suite started, in order, so that the teardown stops them all
// (the last started first) and checks that none is left.
type processList struct {
	mu    sync.Mutex
	procs []*devkit.Process
}

var started processList

func (l *processList) add(p *devkit.Process) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.procs = append(l.procs, p)
}

func (l *processList) all() []*devkit.Process {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*devkit.Process(nil), l.procs...)
}

// ---------------------------------------------------------------------------------------------
// Small helpers

// runCommand runs a program and returns its standard output; the error carries its standard error.
func runCommand(ctx context.Context, dir string, stdin io.Reader, binary string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(binary), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}
