package docs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// Markers: an HTML comment on the line before a ```yaml block says how to check it.
const (
	// markerRefused: the object must be refused by the API server, with a message that holds
	// the text after the colon ("refused: 5x").
	markerRefused = "refused:"
	// markerFragment: the block is the spec of an object of the kind after the colon
	// ("fragment: OaatGroup"), checked inside a minimal object of that kind.
	markerFragment = "fragment:"
	// markerSample: the block must equal the file after the colon, a path from the repository's
	// root ("sample: config/samples/x.yaml"), comments aside.
	markerSample = "sample:"
	// markerNotObject: the block is YAML but not a Kubernetes object (a Prometheus scrape
	// configuration); it must only parse. A block marked checked-by (support.CheckedBlocks) is
	// not an object either: it must parse, and the test it names runs it.
	markerNotObject = "not-a-kubernetes-object"
)

// fragmentBases are the objects a fragment's spec is merged into: what a fragment leaves out
// (the required fields it does not illustrate) is taken from here.
var fragmentBases = map[string]string{
	"OaatGroup": `
apiVersion: oaat.io/v1alpha1
kind: OaatGroup
metadata:
  name: docs-fragment
spec:
  oaatType: oaattest
  oaatItems: [item1]
`,
}

// controlPlaneVars name the binaries envtest starts; `make test` builds and sets them.
var controlPlaneVars = []string{"TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD", "TEST_ASSET_KUBECTL"}

// TestYAMLBlocks creates every Kubernetes object of the docs' ```yaml blocks with server-side
// dry-run against a real kube-apiserver with the project's CRDs: the oaat.io kinds (and any other
// kind the API server serves, such as ConfigMap) must be accepted, or refused where the docs say
// so. Kinds the API server does not serve (OLM's) must parse and name their apiVersion and kind.
func TestYAMLBlocks(t *testing.T) {
	if err := devkit.RequireFiles(controlPlaneVars...); err != nil {
		t.Fatalf("%v. The docs' YAML is checked against a real kube-apiserver: run `make test-docs` "+
			"(or `make test`), which builds the binaries into bin/ and sets them", err)
	}
	pages, err := readPages()
	if err != nil {
		t.Fatal(err)
	}
	c, ns := startAPIServer(t)

	checked := map[string]int{}
	for _, p := range pages {
		for _, b := range p.blocks {
			if b.lang != "yaml" {
				continue
			}
			t.Run(b.where(), func(t *testing.T) {
				for _, kind := range checkYAMLBlock(t, c, ns, b) {
					checked[kind]++
				}
			})
		}
	}
	// The check must have checked something: each kind of the API appears in the docs.
	for _, kind := range []string{"OaatType", "OaatGroup", "OaatRun", "OaatLock", "ClusterOaatLock"} {
		if checked[kind] == 0 {
			t.Errorf("no %s created with dry-run from the docs (checked: %v)", kind, checked)
		}
	}
	t.Logf("objects checked by kind: %v", checked)
}

// startAPIServer starts envtest with the CRDs of config/crd/bases and returns a non-cached
// client and a namespace created for the test.
func startAPIServer(t *testing.T) (client.Client, string) {
	t.Helper()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(repoRoot, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop() // Start leaves etcd and the API server running when the CRDs are refused
		t.Fatalf("starting the envtest control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the envtest control plane: %v", err)
		}
	})
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "docs-"}}
	if err := c.Create(context.Background(), namespace); err != nil {
		t.Fatal(err)
	}
	return c, namespace.Name
}

// checkYAMLBlock checks one block as its marker says, and returns the kinds it created with
// dry-run.
func checkYAMLBlock(t *testing.T, c client.Client, ns string, b block) []string {
	t.Helper()
	pkg, name, checked := support.ParseCheckedBy(b.marker)
	switch {
	case b.marker == markerNotObject || checked:
		if checked {
			expectCheckedByTest(t, b, pkg, name)
		}
		docs, err := splitYAML(b.text)
		if err != nil {
			t.Fatalf("%s: %v", b.where(), err)
		}
		for _, doc := range docs {
			var v any
			if err := yaml.Unmarshal(doc, &v); err != nil || v == nil {
				t.Errorf("%s: not YAML (%v)", b.where(), err)
			}
		}
		return nil
	case strings.HasPrefix(b.marker, markerFragment):
		obj, err := fragmentObject(strings.TrimSpace(strings.TrimPrefix(b.marker, markerFragment)), b.text)
		if err != nil {
			t.Fatalf("%s: %v", b.where(), err)
		}
		if err := dryRunCreate(c, ns, obj, true); err != nil {
			t.Errorf("%s: the API server refuses the fragment: %v", b.where(), err)
		}
		return []string{obj.GetKind()}
	}

	docs, err := splitYAML(b.text)
	if err != nil {
		t.Fatalf("%s: %v", b.where(), err)
	}
	if strings.HasPrefix(b.marker, markerSample) {
		checkSample(t, b, strings.TrimSpace(strings.TrimPrefix(b.marker, markerSample)), docs)
	}
	var kinds []string
	for i, doc := range docs {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Errorf("%s, document %d: not YAML: %v", b.where(), i+1, err)
			continue
		}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
			t.Errorf("%s, document %d: no apiVersion or kind: mark the block <!-- %s --> or <!-- %s KIND --> if it is not a whole object",
				b.where(), i+1, markerNotObject, markerFragment)
			continue
		}
		served, err := servedKind(c, obj)
		if err != nil {
			t.Errorf("%s, document %d: %v", b.where(), i+1, err)
			continue
		}
		if !served {
			// OLM's kinds: the API server here does not serve them.
			if obj.GetName() == "" {
				t.Errorf("%s, document %d: %s without a name", b.where(), i+1, obj.GetKind())
			}
			continue
		}
		err = dryRunCreate(c, ns, obj, false)
		if want, ok := strings.CutPrefix(b.marker, markerRefused); ok {
			want = strings.TrimSpace(want)
			switch {
			case err == nil:
				t.Errorf("%s: the docs say this %s is refused, but the API server accepts it", b.where(), obj.GetKind())
			case !apierrors.IsInvalid(err):
				t.Errorf("%s: the API server refuses this %s for another reason than validation: %v", b.where(), obj.GetKind(), err)
			case !strings.Contains(err.Error(), want):
				t.Errorf("%s: the API server refuses this %s, but its message does not say %q: %v", b.where(), obj.GetKind(), want, err)
			}
		} else if err != nil {
			t.Errorf("%s: the API server refuses this %s: %v", b.where(), obj.GetKind(), err)
		}
		kinds = append(kinds, obj.GetKind())
	}
	return kinds
}

// servedKind reports whether the API server serves the object's kind. The oaat.io kinds must be
// served: their CRDs are installed.
func servedKind(c client.Client, obj *unstructured.Unstructured) (bool, error) {
	gvk := obj.GroupVersionKind()
	_, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err) && gvk.Group != v1alpha1.GroupVersion.Group:
		return false, nil
	}
	return false, fmt.Errorf("%s: %w", gvk, err)
}

// dryRunCreate creates the object with server-side dry-run, in ns if it is namespaced (the
// namespace the docs name, if any, does not exist here).
func dryRunCreate(c client.Client, ns string, obj *unstructured.Unstructured, fragment bool) error {
	namespaced, err := c.IsObjectNamespaced(obj)
	if err != nil {
		return err
	}
	if namespaced {
		obj.SetNamespace(ns)
	}
	if fragment && obj.GetName() == "" {
		obj.SetName("docs-fragment")
	}
	return c.Create(context.Background(), obj, client.DryRunAll)
}

// fragmentObject merges a block holding the spec of an object of kind into that kind's base.
func fragmentObject(kind, text string) (*unstructured.Unstructured, error) {
	base, ok := fragmentBases[kind]
	if !ok {
		return nil, fmt.Errorf("no base object for fragments of kind %q", kind)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(base), &obj.Object); err != nil {
		return nil, err
	}
	var frag map[string]any
	if err := yaml.Unmarshal([]byte(text), &frag); err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	spec, ok := frag["spec"].(map[string]any)
	if !ok || len(frag) != 1 {
		return nil, errors.New("a fragment holds only spec")
	}
	baseSpec, _, err := unstructured.NestedMap(obj.Object, "spec")
	if err != nil {
		return nil, err
	}
	for k, v := range spec {
		baseSpec[k] = v
	}
	return obj, unstructured.SetNestedMap(obj.Object, baseSpec, "spec")
}

// checkSample fails unless the block's objects equal those of the sample file, comments aside.
func checkSample(t *testing.T, b block, path string, docs [][]byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Errorf("%s: %v", b.where(), err)
		return
	}
	want, err := splitYAML(string(data))
	if err != nil {
		t.Errorf("%s: %s: %v", b.where(), path, err)
		return
	}
	if len(want) != len(docs) {
		t.Errorf("%s: %d objects, %s has %d", b.where(), len(docs), path, len(want))
		return
	}
	for i := range want {
		var got, exp any
		if err := yaml.Unmarshal(docs[i], &got); err != nil {
			t.Errorf("%s: %v", b.where(), err)
			return
		}
		if err := yaml.Unmarshal(want[i], &exp); err != nil {
			t.Errorf("%s: %s: %v", b.where(), path, err)
			return
		}
		if diff := cmp.Diff(exp, got); diff != "" {
			t.Errorf("%s differs from %s (-sample +docs):\n%s", b.where(), path, diff)
		}
	}
}

// splitYAML splits a stream of YAML documents, leaving out empty ones.
func splitYAML(text string) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

// stripComments drops the comment lines of a YAML document, to tell an empty one.
func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}
