//go:build olmcatalog

package olmcatalog

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

var _ = Describe("The bundle's CRDs", func() {
	It("take no short name or plural that a resource of a cluster with OLM already has", func(_ SpecContext) {
		files, err := filepath.Glob(filepath.Join(env.repoRoot, "bundle", "manifests", "oaat.io_*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).NotTo(BeEmpty())
		ours := map[string]string{}
		for _, f := range files {
			data, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(yaml.Unmarshal(data, crd)).To(Succeed())
			for _, n := range append([]string{crd.Spec.Names.Plural, crd.Spec.Names.Singular}, crd.Spec.Names.ShortNames...) {
				ours[n] = crd.Name
			}
		}
		// What kubectl resolves names against: every resource the API server serves, OLM's among them.
		_, lists, err := clientset.Discovery().ServerGroupsAndResources()
		Expect(err).NotTo(HaveOccurred())
		var clashes []string
		for _, list := range lists {
			if strings.HasPrefix(list.GroupVersion, "oaat.io/") {
				continue
			}
			for _, r := range list.APIResources {
				for _, n := range append([]string{r.Name, r.SingularName}, r.ShortNames...) {
					if crd, ok := ours[n]; ok {
						clashes = append(clashes, n+" of "+crd+" is also "+r.Name+" in "+list.GroupVersion)
					}
				}
			}
		}
		Expect(clashes).To(BeEmpty(), "kubectl get NAME would pick one of the two")
	}, SpecTimeout(time.Minute))
})
