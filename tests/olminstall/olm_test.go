//go:build olminstall

package olminstall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// olmNamespace is where OLM's operators run (--namespace) and where the CatalogSource is: a
// global catalog, which a Subscription in any namespace may name.
const olmNamespace = "olm"

// catalogSourceName is the CatalogSource that names the suite's opm serve.
const catalogSourceName = "oaat-local"

// kubectl runs the pinned kubectl as the admin.
func kubectl(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	return runCommand(ctx, env.repoRoot, stdin, env.kubectl, append([]string{"--kubeconfig", adminKubeconfig}, args...)...)
}

// applyCRDs applies OLM's CRDs and the two monitoring CRDs server-side (they are too large for
// client-side apply's annotation) and waits until every one is Established.
func applyCRDs(ctx context.Context) {
	GinkgoHelper()
	olmFiles, err := filepath.Glob(filepath.Join(env.olmCRDs, "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(olmFiles).NotTo(BeEmpty(), "no CRD in %s", env.olmCRDs)
	files := olmFiles
	for _, f := range support.MonitoringCRDFiles {
		files = append(files, filepath.Join(env.monitoringCRDs, f))
	}
	args := []string{"apply", "--server-side", "--field-manager=olminstall-test"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	out, err := kubectl(ctx, nil, args...)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("Applied the CRDs:\n%s", out)

	wait := []string{"wait", "--for=condition=Established", "--timeout=60s"}
	for _, f := range files {
		wait = append(wait, "-f", f)
	}
	_, err = kubectl(ctx, nil, wait...)
	Expect(err).NotTo(HaveOccurred(), "the CRDs did not become Established")
}

// startOLM creates OLM's namespace and starts its olm and catalog operators outside the cluster,
// as the admin. Both serve health and metrics on :8080 (fixed in OLM's code): the second to start
// logs that the port is taken and runs on.
func startOLM(ctx context.Context) {
	GinkgoHelper()
	createNamespace(ctx, olmNamespace)
	logs := filepath.Join(cluster.StateDir, "logs")
	kubeconfigEnv := []string{"KUBECONFIG=" + adminKubeconfig}
	var err error
	olmProc, err = startProcess("olm", filepath.Join(logs, "olm.log"), kubeconfigEnv, env.olm,
		"--namespace", olmNamespace, "--writeStatusName", "")
	Expect(err).NotTo(HaveOccurred())
	// The images are placeholders: with a grpc CatalogSource and a catalog whose bundle carries
	// its manifests inline, the catalog operator starts no registry pod and no unpack Job.
	catalogProc, err = startProcess("catalog", filepath.Join(logs, "catalog.log"), kubeconfigEnv, env.catalogOperator,
		"--kubeconfig", adminKubeconfig,
		"--namespace", olmNamespace, "--writeStatusName", "",
		"--configmapServerImage", "placeholder.invalid/configmap-operator-registry:none",
		"--opmImage", "placeholder.invalid/opm:none",
		"--util-image", "placeholder.invalid/olm:none")
	Expect(err).NotTo(HaveOccurred())
}

// servedCatalog is the file-based catalog the suite renders and serves.
type servedCatalog struct {
	dir     string // the catalog directory, under the state directory
	port    int
	pkg     string // the package
	channel string // its default channel
	bundle  string // the bundle's name: the CSV's
}

// serveCatalog renders bundle/ into a file-based catalog that installs with no image pull
// (`opm render ./bundle` gives an olm.bundle with image "" and the manifests inline as
// olm.bundle.object properties), adds the olm.package and olm.channel entries, validates it, and
// serves it with `opm serve` on a free port.
func serveCatalog(ctx context.Context) *servedCatalog {
	GinkgoHelper()
	pkg, channels, defaultChannel := bundleMetadata()

	rendered, err := runCommand(ctx, env.repoRoot, nil, env.opm, "render", env.bundle, "-o", "yaml")
	Expect(err).NotTo(HaveOccurred())
	bundles := 0
	var bundleName string
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(rendered), 4096)
	for {
		doc := map[string]any{}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		Expect(err).NotTo(HaveOccurred(), "decoding opm render's output")
		if doc["schema"] != "olm.bundle" {
			continue
		}
		bundles++
		bundleName, _ = doc["name"].(string)
		Expect(doc["package"]).To(Equal(pkg), "the bundle's package")
		Expect(doc).To(HaveKeyWithValue("image", ""), "a bundle with an image would make the catalog operator pull it")
		objects := 0
		props, _ := doc["properties"].([]any)
		for _, p := range props {
			if m, ok := p.(map[string]any); ok && m["type"] == "olm.bundle.object" {
				objects++
			}
		}
		Expect(objects).To(BeNumerically(">", 0), "the bundle's manifests must be inline (olm.bundle.object)")
	}
	Expect(bundles).To(Equal(1), "olm.bundle entries in opm render ./bundle")

	var index bytes.Buffer
	fmt.Fprintf(&index, "---\nschema: olm.package\nname: %s\ndefaultChannel: %s\n", pkg, defaultChannel)
	for _, ch := range channels {
		fmt.Fprintf(&index, "---\nschema: olm.channel\npackage: %s\nname: %s\nentries:\n- name: %s\n", pkg, ch, bundleName)
	}
	index.WriteString(rendered)

	dir, err := os.MkdirTemp(cluster.StateDir, "catalog-")
	Expect(err).NotTo(HaveOccurred())
	c := &servedCatalog{dir: dir, pkg: pkg, channel: defaultChannel, bundle: bundleName}
	Expect(os.MkdirAll(filepath.Join(dir, pkg), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, pkg, "index.yaml"), index.Bytes(), 0o644)).To(Succeed())
	_, err = runCommand(ctx, env.repoRoot, nil, env.opm, "validate", dir)
	Expect(err).NotTo(HaveOccurred(), "opm validate of the rendered catalog")

	c.port, err = devkit.FreePort()
	Expect(err).NotTo(HaveOccurred())
	logs := filepath.Join(cluster.StateDir, "logs")
	// opm serve listens on all interfaces (":PORT", fixed in its code); no pprof endpoint (its
	// default, localhost:6060, would clash with another opm), and the termination log in the state
	// directory rather than /dev/termination-log.
	opmProc, err = startProcess("opm-serve", filepath.Join(logs, "opm-serve.log"), nil, env.opm,
		"serve", dir, "-p", strconv.Itoa(c.port), "--pprof-addr", "",
		"--termination-log", filepath.Join(logs, "opm-serve.termination.log"))
	Expect(err).NotTo(HaveOccurred())
	// It listens once it has loaded the catalog.
	Eventually(func() error {
		expectRunning()
		conn, err := net.DialTimeout("tcp", c.address(), time.Second)
		if err != nil {
			return err
		}
		return conn.Close()
	}).WithContext(ctx).WithTimeout(60*time.Second).Should(Succeed(), "opm serve on %s", c.address())
	GinkgoWriter.Printf("Serving catalog %s (package %s, channel %s, bundle %s) on %s\n", dir, pkg, defaultChannel, bundleName, c.address())
	return c
}

func (c *servedCatalog) address() string { return "127.0.0.1:" + strconv.Itoa(c.port) }

// bundleMetadata reads the package and the channels from bundle/metadata/annotations.yaml; the
// default channel is the bundle's default channel annotation if any, else its first channel.
func bundleMetadata() (pkg string, channels []string, defaultChannel string) {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(env.bundle, "metadata", "annotations.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	Expect(yaml.Unmarshal(data, &meta)).To(Succeed())
	pkg = meta.Annotations["operators.operatorframework.io.bundle.package.v1"]
	Expect(pkg).NotTo(BeEmpty(), "the bundle's package annotation")
	for _, ch := range strings.Split(meta.Annotations["operators.operatorframework.io.bundle.channels.v1"], ",") {
		if ch = strings.TrimSpace(ch); ch != "" {
			channels = append(channels, ch)
		}
	}
	Expect(channels).NotTo(BeEmpty(), "the bundle's channels annotation")
	defaultChannel = meta.Annotations["operators.operatorframework.io.bundle.channel.default.v1"]
	if defaultChannel == "" {
		defaultChannel = channels[0]
	}
	return pkg, channels, defaultChannel
}

// createCatalogSource creates the grpc CatalogSource that names opm serve's address and waits
// until the catalog operator reports its connection READY.
func createCatalogSource(ctx context.Context, c *servedCatalog) {
	GinkgoHelper()
	cs := objects.Parse(`
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: %s
  namespace: %s
spec:
  sourceType: grpc
  address: %s
  displayName: oaat-operator (bundle/ of this tree)
  publisher: olminstall test
`, catalogSourceName, olmNamespace, c.address())
	objects.Create(ctx, support.GVRCatalogSource, cs)
	Eventually(func(g Gomega) {
		expectRunning()
		got := objects.Get(ctx, g, support.GVRCatalogSource, olmNamespace, catalogSourceName)
		state, _, _ := unstructured.NestedString(got.Object, "status", "connectionState", "lastObservedState")
		g.Expect(state).To(Equal("READY"), "status: %v", got.Object["status"])
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(Succeed(), "the CatalogSource's connection; catalog log %s", catalogProc.LogPath)
}

// ---------------------------------------------------------------------------------------------
// Objects

// createNamespace creates a namespace labelled as the suite's and waits for its default ServiceAccount.
func createNamespace(ctx context.Context, name string) {
	GinkgoHelper()
	Expect(support.CreateNamespace(ctx, clientset, name, map[string]string{labelSuite: "true"}, 30*time.Second)).To(Succeed())
}

// deleteNamespaces deletes the namespaces and waits until they are gone.
func deleteNamespaces(ctx context.Context, names ...string) {
	GinkgoHelper()
	Expect(support.DeleteNamespaces(ctx, clientset, 2*time.Minute, names...)).To(Succeed())
}

func itoa(i int) string { return strconv.Itoa(i) }

// catalogDoneWith tells whether the catalog operator is done executing the InstallPlan: whether its
// log shows a sync of the plan that found it in phase Complete.
//
// The plan's phase Complete does not tell that. The catalog operator executes an Installing plan
// from the copy in its informer cache, and requeues it on every update and every 5 s while it is
// Installing. A requeue that arrives during an execution is served as soon as that execution has
// written Complete, before the informer has that update: from a copy that still shows the plan
// Installing with its steps not done, so every step is executed again (created if missing, else
// updated), and the status write then fails on a conflict. The catalog operator's client is
// rate-limited (client-go's default, 5 requests/s) and each step of an existing object costs a
// create, a get and a patch: with this bundle's 22 steps, that stale execution ran 7-8 s after
// the plan showed Complete. A CSV deleted meanwhile loses its cluster-scoped RBAC in its finalizer
// and gets its ClusterRole or ClusterRoleBinding back from that execution, for good: OLM deletes
// them only in the finalizer (a cluster-scoped object cannot have the namespaced CSV as owner).
//
// The workqueue never runs two syncs of one plan at once, and the update that wrote Complete
// queues one more sync, which reads Complete: once that sync is logged, no execution of the plan
// runs and none will start. OLM offers no API signal of it (the InstallPlan is a one-shot API).
func catalogDoneWith(namespace, ipName string) (bool, error) {
	data, err := os.ReadFile(catalogProc.LogPath)
	if err != nil {
		return false, err
	}
	want := []string{"msg=syncing", "ip=" + ipName, "namespace=" + namespace, "phase=Complete"}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		found := 0
		for _, w := range want {
			if slices.Contains(fields, w) {
				found++
			}
		}
		if found == len(want) {
			return true, nil
		}
	}
	return false, nil
}
