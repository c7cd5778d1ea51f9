//go:build olmcatalog

package olmcatalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// runDocBlocks runs the blocks of the docs marked <!-- checked-by: tests/olmcatalog name --> as a
// user's shell runs them (support.RunCheckedBlock), as the cluster's admin, with kubectl and
// operator-sdk on the PATH and extra added to the environment, and returns what they printed. The
// blocks: docs/olm.md's uninstall (uninstall), docs/upgrading.md's run bundle-upgrade
// (bundle-upgrade) and the runbook OaatOperatorDown's kubectl get csv (operator-down-olm).
func runDocBlocks(ctx context.Context, name string, extra ...string) string {
	GinkgoHelper()
	// Not GinkgoT().TempDir(): the uninstall runs in a DeferCleanup, where no other may be made.
	bin, err := os.MkdirTemp("", "olmcatalog-docs-")
	Expect(err).NotTo(HaveOccurred())
	defer func() { Expect(os.RemoveAll(bin)).To(Succeed()) }()
	for tool, path := range map[string]string{"kubectl": env.kubectl, "operator-sdk": env.operatorSDK} {
		Expect(os.Symlink(path, filepath.Join(bin, tool))).To(Succeed())
	}
	blocks, err := support.CheckedBlocks(env.repoRoot, "tests/olmcatalog", name)
	Expect(err).NotTo(HaveOccurred())
	vars := append([]string{"KUBECONFIG=" + adminKubeconfig, "PATH=" + bin + ":" + os.Getenv("PATH")}, extra...)
	var all strings.Builder
	for _, b := range blocks {
		out, err := support.RunCheckedBlock(ctx, env.repoRoot, vars, b, nil)
		GinkgoWriter.Printf("%s:\n%s%s\n", b.Where(), b.Text, out)
		Expect(err).NotTo(HaveOccurred())
		all.WriteString(out)
	}
	return all.String()
}
