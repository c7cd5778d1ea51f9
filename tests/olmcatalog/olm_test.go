//go:build olmcatalog

package olmcatalog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// olmNamespace is OLM's namespace in its quickstart manifests (and its global catalog namespace).
const olmNamespace = "olm"

// catalogSourceName is the CatalogSource that names the catalog image.
const catalogSourceName = "oaat-catalog"

// olmImageDigest matches how OLM's quickstart manifests name OLM's image: by the digest of the
// image the release pushed, which no local build can reproduce.
var olmImageDigest = regexp.MustCompile(`quay\.io/operator-framework/olm@sha256:[0-9a-f]{64}`)

// singleDashFlag matches an argument line of a manifest that gives a long flag with one dash
// ("- '-namespace'", "- -util-image"); a single-letter flag ("- -v=4") is left alone.
var singleDashFlag = regexp.MustCompile(`(?m)^(\s*-\s+'?)-([A-Za-z][A-Za-z-]+)`)

// olmManifests returns OLM's quickstart olm.yaml as the suite applies it: OLM's image named by its
// release's tag (olmImg) instead of the release's digest; the catalog operator's long flags with
// two dashes (the quickstart in the module still gives them one, "-namespace", which v0.33.0's
// cobra command refuses: "unknown shorthand flag: 'n' in -namespace"; the release's olm.yaml,
// rendered from deploy/chart, has "--namespace"); and without two objects this cluster cannot
// serve: the packageserver CSV (an aggregated API server: the local API server has no
// front-proxy credentials for the aggregation layer) and the operatorhubio CatalogSource (an
// image from the internet). Everything else (namespaces, RBAC, both Deployments with their
// arguments, the OperatorGroups) is applied as it is.
func olmManifests(olmYAML []byte, olmImg string) ([]byte, error) {
	var kept []string
	for _, doc := range strings.Split(string(olmYAML), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return nil, fmt.Errorf("olm.yaml: %w", err)
		}
		switch {
		case meta.Kind == "ClusterServiceVersion" && meta.Metadata.Name == "packageserver":
			continue
		case meta.Kind == "CatalogSource" && meta.Metadata.Name == "operatorhubio-catalog":
			continue
		}
		doc = olmImageDigest.ReplaceAllString(doc, olmImg)
		kept = append(kept, singleDashFlag.ReplaceAllString(doc, "$1--$2"))
	}
	out := strings.Join(kept, "\n---")
	if strings.Contains(out, "@sha256:") {
		return nil, fmt.Errorf("olm.yaml names an image by a digest that is not OLM's: %s", out)
	}
	if !strings.Contains(out, olmImg) {
		return nil, fmt.Errorf("olm.yaml no longer names OLM's image by digest: update olmManifests")
	}
	return []byte(out), nil
}

// deployOLM applies OLM's CRDs (its chart's: the quickstart's crds.yaml in the module is older
// and lacks OLMConfig, without which the olm operator never syncs its caches) and the monitoring
// CRDs, server-side (they are too large for the last-applied annotation); then OLM's manifests and
// the chart's OLMConfig "cluster"; and waits until both operators' Deployments are available:
// their pods run on the real node from the OLM image.
func deployOLM(ctx context.Context) {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(env.olmDeploy, "chart", "crds", "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty(), "no CRD in %s/chart/crds", env.olmDeploy)
	for _, f := range support.MonitoringCRDFiles {
		files = append(files, filepath.Join(env.monitoringCRDs, f))
	}
	apply := []string{"apply", "--server-side", "--field-manager=olmcatalog-test"}
	wait := []string{"wait", "--for=condition=Established", "--timeout=60s"}
	for _, f := range files {
		apply = append(apply, "-f", f)
		wait = append(wait, "-f", f)
	}
	_, err = kubectl(ctx, nil, apply...)
	Expect(err).NotTo(HaveOccurred())
	_, err = kubectl(ctx, nil, wait...)
	Expect(err).NotTo(HaveOccurred(), "the CRDs did not become Established")

	olmYAML, err := os.ReadFile(filepath.Join(env.olmDeploy, "upstream", "quickstart", "olm.yaml"))
	Expect(err).NotTo(HaveOccurred())
	manifests, err := olmManifests(olmYAML, env.olmImg)
	Expect(err).NotTo(HaveOccurred())
	out, err := kubectl(ctx, bytes.NewReader(manifests), "apply", "--server-side", "--field-manager=olmcatalog-test", "-f", "-")
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("Applied OLM:\n%s", out)
	_, err = kubectl(ctx, nil, "apply", "--server-side", "--field-manager=olmcatalog-test",
		"-f", filepath.Join(env.olmDeploy, "chart", "templates", "0000_50_olm_03-olmconfig.yaml"))
	Expect(err).NotTo(HaveOccurred())
	for _, d := range []string{"olm-operator", "catalog-operator"} {
		_, err := kubectl(ctx, nil, "-n", olmNamespace, "rollout", "status", "deployment/"+d, "--timeout=5m")
		Expect(err).NotTo(HaveOccurred(), "OLM's %s: %s", d, describePods(ctx, olmNamespace))
	}
	expectPodsOnRealNode(ctx, olmNamespace, "app in (olm-operator, catalog-operator)", env.olmImg)
}

// createCatalogSource names the catalog image in a grpc CatalogSource in OLM's global catalog
// namespace and waits until the catalog operator's connection to OLM's registry pod, through its
// Service, is READY.
func createCatalogSource(ctx context.Context) {
	GinkgoHelper()
	createCatalogSourceOf(ctx, catalogSourceName, env.catalogImg)
}

// createCatalogSourceOf makes the CatalogSource name of the catalog image and waits until it is
// READY, its registry pod on the real node.
func createCatalogSourceOf(ctx context.Context, name, image string) {
	GinkgoHelper()
	cs := objects.Parse(`
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: %s
  namespace: %s
spec:
  sourceType: grpc
  image: %s
  displayName: oaat-operator
  publisher: oaat-io
`, name, olmNamespace, image)
	objects.Create(ctx, support.GVRCatalogSource, cs)
	Eventually(func(g Gomega) {
		got := objects.Get(ctx, g, support.GVRCatalogSource, olmNamespace, name)
		state, _, _ := unstructured.NestedString(got.Object, "status", "connectionState", "lastObservedState")
		g.Expect(state).To(Equal("READY"), "status: %v", got.Object["status"])
	}).WithContext(ctx).WithTimeout(5*time.Minute).Should(Succeed(), "the CatalogSource's connection; pods: %s", describePods(ctx, olmNamespace))
	expectPodsOnRealNode(ctx, olmNamespace, "olm.catalogSource="+name, image)
}

// expectPodsOnRealNode checks that the pods of the selector run on the real node from image,
// once the pods of an earlier rollout are gone; an image of the release (the operator's, the
// catalog's), by the release's digest: the node pulled what make release shipped.
func expectPodsOnRealNode(ctx context.Context, namespace, selector, image string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		pods, err := clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods.Items).NotTo(BeEmpty(), "no pod in %s matches %s", namespace, selector)
		for _, p := range pods.Items {
			g.Expect(p.Spec.NodeName).To(Equal("real-node"), "pod %s/%s", namespace, p.Name)
			g.Expect(p.Spec.Containers[0].Image).To(Equal(image), "pod %s/%s", namespace, p.Name)
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s/%s", namespace, p.Name)
			if digest, ok := env.released[image]; ok {
				g.Expect(p.Status.ContainerStatuses).NotTo(BeEmpty(), "pod %s/%s", namespace, p.Name)
				g.Expect(p.Status.ContainerStatuses[0].ImageID).To(HaveSuffix("@"+digest),
					"pod %s/%s runs %s of the release (images.txt)", namespace, p.Name, image)
			}
		}
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
}

// describePods summarises the pods of a namespace for a failure message: phase, node, and each
// container's state.
func describePods(ctx context.Context, namespace string) string {
	out, err := kubectl(context.WithoutCancel(ctx), nil, "-n", namespace, "get", "pods", "-o", "wide")
	if err != nil {
		return err.Error()
	}
	events, _ := kubectl(context.WithoutCancel(ctx), nil, "-n", namespace, "get", "events", "--sort-by=.lastTimestamp")
	return out + "\n" + lastLines(events, 20)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ---------------------------------------------------------------------------------------------
// Objects

// createNamespace creates a namespace and waits for its default ServiceAccount.
func createNamespace(ctx context.Context, name string) {
	GinkgoHelper()
	Expect(support.CreateNamespace(ctx, clientset, name, nil, 30*time.Second)).To(Succeed())
}

// deleteNamespaces deletes the namespaces and waits until they are gone.
func deleteNamespaces(ctx context.Context, names ...string) {
	GinkgoHelper()
	Expect(support.DeleteNamespaces(ctx, clientset, 2*time.Minute, names...)).To(Succeed())
}
