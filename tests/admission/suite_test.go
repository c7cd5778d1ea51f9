// Package admission checks the CRDs' admission rules on real API servers (envtest: a
// kube-apiserver and an etcd): the newest (TEST_ASSET_KUBE_APISERVER) and the oldest that the
// bundle's CSV claims (TEST_ASSET_KUBE_APISERVER_FLOOR, spec.minKubeVersion). Installing the CRDs
// there checks that every CEL rule compiles and stays within the cost budget of that version;
// then the same requests (server-side dry-run creates) must get the same answers from both.
package admission

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

// controlPlaneVars name the binaries envtest starts; `make test` builds and sets them.
var controlPlaneVars = []string{"TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_KUBE_APISERVER_FLOOR", "TEST_ASSET_ETCD", "TEST_ASSET_KUBECTL"}

// floorSample: the oldest server gets every floorSample-th generated schedule of the corpus.
const floorSample = 4

// repoRoot is the repository's root directory: go test runs a package's tests in its
// directory (and the tree is built -trimpath, so no source path is known at run time).
var repoRoot = filepath.Join("..", "..")

// TestAdmission runs the admission checks on each API server in turn, one control plane at a
// time.
func TestAdmission(t *testing.T) {
	if err := devkit.RequireFiles(controlPlaneVars...); err != nil {
		t.Fatalf("%v. The admission rules are checked on real API servers: run `make test-admission` "+
			"(or `make test`), which builds the binaries and sets them", err)
	}
	// The oldest server answers each schedule an order of magnitude slower than the newest (it
	// compiles the rules' regular expressions per request): it gets the table and every
	// floorSample-th generated string, the newest the whole corpus. Both install the same CRDs,
	// which is what checks the rules' cost budget on each.
	for _, server := range []struct {
		name, env string
		sample    int
	}{
		{"oldest supported (minKubeVersion)", "TEST_ASSET_KUBE_APISERVER_FLOOR", floorSample},
		{"newest", "TEST_ASSET_KUBE_APISERVER", 1},
	} {
		t.Run(server.name, func(t *testing.T) {
			c := startAPIServer(t, os.Getenv(server.env))
			t.Run("cron corpus", func(t *testing.T) { testCronCorpus(t, c, server.sample) })
			t.Run("time zones", func(t *testing.T) { testTimeZones(t, c) })
			t.Run("groups", func(t *testing.T) { testGroups(t, c) })
			t.Run("durations", func(t *testing.T) { testDurations(t, c) })
			t.Run("locks", func(t *testing.T) { testLocks(t, c) })
		})
	}
}

// startAPIServer starts envtest with the kube-apiserver at path and the CRDs of
// config/crd/bases, and returns a non-cached client without a rate limit.
func startAPIServer(t *testing.T, path string) client.Client {
	t.Helper()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(repoRoot, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	env.ControlPlane.APIServer = &envtest.APIServer{Path: path}
	// envtest and the client log through controller-runtime's logger, which says nothing this
	// test reads; without one, controller-runtime prints a warning with a stack.
	log.SetLogger(logr.Discard())
	start := time.Now()
	cfg, err := env.Start()
	if err != nil {
		// Start leaves etcd and the API server running when the CRDs are refused: stop them.
		_ = env.Stop()
		t.Fatalf("starting the envtest control plane with %s (installing the CRDs checks their rules): %v", path, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the envtest control plane: %v", err)
		}
	})
	cfg.QPS, cfg.Burst = -1, 0 // thousands of dry-run requests: no client-side rate limit
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := discoveryVersion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver %s (%s) started with the CRDs in %v", info, path, time.Since(start).Round(time.Millisecond))
	return c
}

// group is an OaatGroup as the API server receives it: a map, so that a field set to "" is sent
// as "" (the Go type would leave it out).
func group(name string, spec map[string]any) *unstructured.Unstructured {
	full := map[string]any{"oaatType": "backup", "oaatItems": []any{"a"}}
	for k, v := range spec {
		full[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "oaat.io/v1alpha1",
		"kind":       "OaatGroup",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec":       full,
	}}
}

// dryRun creates obj with server-side dry-run and returns the API server's refusal, or nil.
func dryRun(ctx context.Context, c client.Client, obj client.Object) error {
	return c.Create(ctx, obj, client.DryRunAll)
}

// discoveryVersion is the API server's version, as it reports it.
func discoveryVersion(cfg *rest.Config) (string, error) {
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	v, err := d.ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}
