package support

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Objects reads and writes objects of any kind (OLM's, whose Go types the module does not
// depend on) as unstructured objects through a dynamic client, for Ginkgo specs: an error fails
// the spec, or the Gomega of an Eventually.
type Objects struct {
	Dynamic dynamic.Interface
}

// Parse parses a YAML manifest, a format for fmt.Sprintf, into an unstructured object.
func (o Objects) Parse(format string, args ...any) *unstructured.Unstructured {
	ginkgo.GinkgoHelper()
	u, err := ParseObject(format, args...)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return u
}

// Get reads an object (namespace "" for a cluster-scoped one); g is the Gomega of the caller
// (an Eventually's, which then retries).
func (o Objects) Get(ctx context.Context, g gomega.Gomega, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	u, err := o.Dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred(), "getting %s %s/%s", gvr.Resource, namespace, name)
	return u
}

// Create creates an object.
func (o Objects) Create(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	ginkgo.GinkgoHelper()
	_, err := o.Dynamic.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "creating %s %s/%s", gvr.Resource, u.GetNamespace(), u.GetName())
}
