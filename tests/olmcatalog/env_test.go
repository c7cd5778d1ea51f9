//go:build olmcatalog

package olmcatalog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

// fileVars name the files the suite runs and reads: the binaries cluster.sh starts (the
// Makefile's CLUSTER_ENV, with the real node's), opm, OLM's deploy directory (of the pinned
// operator-lifecycle-manager module), operator-sdk and the Prometheus Operator's CRD directory.
var fileVars = []string{
	"KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER", "KUBE_SCHEDULER", "KUBECTL", "ETCD", "KWOK",
	"KUBELET", "CRI_TEARDOWN", "KUBE_PROXY", "OPM", "OPERATOR_SDK", "OLM_DEPLOY_DIR", "MONITORING_CRDS_DIR",
	"RELEASE_DIST",
}

// imageVars name the public names of the images: the operator's, the bundle's, the catalog's and
// OLM's (all built by make images and pushed into the node's registry at up).
// The previous release's images (PREVIOUS_*) are those the upgrade starts from.
var imageVars = []string{"IMG", "BUNDLE_IMG", "CATALOG_IMG", "OLM_IMG", "PREVIOUS_IMG", "PREVIOUS_BUNDLE_IMG", "PREVIOUS_CATALOG_IMG"}

// testEnv holds the paths and names the suite uses.
type testEnv struct {
	repoRoot string
	kubectl  string
	opm      string
	// operatorSDK is the pinned operator-sdk (run bundle, cleanup, scorecard).
	operatorSDK string
	// olmDeploy is the deploy directory of the pinned operator-lifecycle-manager: the chart's
	// CRDs and OLMConfig (chart/), the quickstart's olm.yaml (upstream/quickstart/).
	olmDeploy      string
	monitoringCRDs string
	img            string
	bundleImg      string
	catalogImg     string
	olmImg         string
	// The previous release's operator, bundle and catalog images.
	previousImg        string
	previousBundleImg  string
	previousCatalogImg string
	// released maps the public name of each image of the release (make release, into RELEASE_DIST:
	// the operator, the bundle and the catalog) to its digest: the pods of those names must run
	// exactly these.
	released map[string]string
}

// loadEnv reads the environment and fails, saying how to run the suite, when something is
// missing: the suite must never pass, or skip, by testing nothing.
func loadEnv() (testEnv, error) {
	if err := devkit.RequireFiles(fileVars...); err != nil {
		return testEnv{}, fmt.Errorf("%w. The OLM catalog test needs the local cluster's binaries with the real node's, "+
			"opm and OLM's manifests: run it with `make test-olm-catalog`", err)
	}
	var missing []string
	for _, v := range append(imageVars, "OAAT_CLUSTER_REAL_NODE") {
		if os.Getenv(v) == "" {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		return testEnv{}, fmt.Errorf("%s not set: run the suite with `make test-olm-catalog`", strings.Join(missing, ", "))
	}
	// go test runs in the package's directory, tests/olmcatalog.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return testEnv{}, err
	}
	released, err := releasedImages(os.Getenv("RELEASE_DIST"))
	if err != nil {
		return testEnv{}, err
	}
	return testEnv{
		released:       released,
		repoRoot:       root,
		kubectl:        os.Getenv("KUBECTL"),
		opm:            os.Getenv("OPM"),
		operatorSDK:    os.Getenv("OPERATOR_SDK"),
		olmDeploy:      os.Getenv("OLM_DEPLOY_DIR"),
		monitoringCRDs: os.Getenv("MONITORING_CRDS_DIR"),
		img:            os.Getenv("IMG"),
		bundleImg:      os.Getenv("BUNDLE_IMG"),
		catalogImg:     os.Getenv("CATALOG_IMG"),
		olmImg:         os.Getenv("OLM_IMG"),

		previousImg:        os.Getenv("PREVIOUS_IMG"),
		previousBundleImg:  os.Getenv("PREVIOUS_BUNDLE_IMG"),
		previousCatalogImg: os.Getenv("PREVIOUS_CATALOG_IMG"),
	}, nil
}

// csvOf is the CSV a bundle image holds: the package's name and the version of the image's tag
// (quay.io/oaat-io/oaat-operator-bundle:v0.3.0 holds oaat-operator.v0.3.0).
func csvOf(bundleImg string) string {
	return packageName + "." + bundleImg[strings.LastIndex(bundleImg, ":")+1:]
}

// runCommand runs binary in dir with stdin and returns its standard output; its error carries
// the standard error.
func runCommand(ctx context.Context, dir string, extraEnv []string, stdin io.Reader, binary string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(binary), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// kubectl runs kubectl as the cluster's admin.
func kubectl(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	return runCommand(ctx, env.repoRoot, nil, stdin, env.kubectl, append([]string{"--kubeconfig", adminKubeconfig}, args...)...)
}

// releasedImages reads the images.txt of a release (make release): "PUBLIC-NAME DIGEST ARCHIVE"
// a line.
func releasedImages(dist string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dist, "images.txt"))
	if err != nil {
		return nil, fmt.Errorf("the release the suite installs from (make test-olm-catalog runs make release first): %w", err)
	}
	images := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !strings.HasPrefix(f[1], "sha256:") {
			return nil, fmt.Errorf("%s: %q is not PUBLIC-NAME DIGEST ARCHIVE", filepath.Join(dist, "images.txt"), line)
		}
		images[f[0]] = f[1]
	}
	return images, nil
}
