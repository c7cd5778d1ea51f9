//go:build olmcatalog

package olmcatalog

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var _ = Describe("The committed catalog", func() {
	It("holds the bundle as opm renders the bundle image from the registry", func(ctx SpecContext) {
		registry := nodeRegistry(ctx)
		// opm reads the registries of containers/image from the user's configuration
		// ($HOME/.config/containers/registries.conf; it takes no CONTAINERS_REGISTRIES_CONF), and
		// --use-http, what a user of a plain-HTTP registry adds, lets it fall back to HTTP (the
		// mirror's insecure = true alone does not: opm sets the TLS choice itself).
		dir := GinkgoT().TempDir()
		conf := filepath.Join(dir, ".config", "containers", "registries.conf")
		Expect(os.MkdirAll(filepath.Dir(conf), 0o755)).To(Succeed())
		host := strings.SplitN(env.bundleImg, "/", 2)[0]
		Expect(os.WriteFile(conf, []byte(fmt.Sprintf(`# The node's registry as a mirror of %[1]s, as containerd has it (hosts.toml).
[[registry]]
prefix = "%[1]s"
location = "%[1]s"
[[registry.mirror]]
location = "%[2]s/%[1]s"
insecure = true
`, host, registry)), 0o644)).To(Succeed())

		out, err := runCommand(ctx, dir, []string{"HOME=" + dir},
			nil, env.opm, "render", env.bundleImg, "--use-http", "--migrate-level=bundle-object-to-csv-metadata", "-o", "yaml")
		Expect(err).NotTo(HaveOccurred())
		rendered := bundleDocument(out, csvName)
		Expect(rendered).NotTo(BeNil(), "opm render %s printed no olm.bundle:\n%s", env.bundleImg, out)
		Expect(rendered["image"]).To(Equal(env.bundleImg))

		committed, err := os.ReadFile(filepath.Join(env.repoRoot, "catalog", packageName, "index.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(bundleDocument(string(committed), csvName)).To(Equal(rendered),
			"catalog/%s/index.yaml differs from `opm render %s` of the image in the registry: make bundle catalog images", packageName, env.bundleImg)
	}, SpecTimeout(2*time.Minute))
})

// nodeRegistry returns the host:port of the real node's registry: the node's address and the
// REGISTRY_PORT cluster.sh chose (its state dir's ports file).
func nodeRegistry(ctx context.Context) string {
	GinkgoHelper()
	node, err := clientset.CoreV1().Nodes().Get(ctx, "real-node", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	var ip string
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip = a.Address
		}
	}
	Expect(ip).NotTo(BeEmpty(), "the real node's InternalIP")
	ports, err := os.ReadFile(filepath.Join(cluster.StateDir, "ports"))
	Expect(err).NotTo(HaveOccurred())
	sc := bufio.NewScanner(bytes.NewReader(ports))
	for sc.Scan() {
		if port, ok := strings.CutPrefix(sc.Text(), "REGISTRY_PORT="); ok {
			return ip + ":" + port
		}
	}
	Fail("no REGISTRY_PORT in " + filepath.Join(cluster.StateDir, "ports"))
	return ""
}

// bundleDocument returns the olm.bundle document of the bundle name of a YAML stream of
// file-based catalog objects.
func bundleDocument(stream, name string) map[string]any {
	GinkgoHelper()
	for _, doc := range strings.Split(stream, "\n---") {
		var m map[string]any
		Expect(yaml.Unmarshal([]byte(doc), &m)).To(Succeed())
		if m["schema"] == "olm.bundle" && m["name"] == name {
			return m
		}
	}
	return nil
}
