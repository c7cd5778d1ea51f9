//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// binaryVars name the binaries the suite runs: those cluster.sh starts (the Makefile's
// CLUSTER_ENV), kustomize and the manager.
var binaryVars = []string{
	"KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER", "KUBE_SCHEDULER", "KUBECTL", "ETCD", "KWOK",
	"KUSTOMIZE", "MANAGER",
}

// testPaths are the files the suite uses.
type testPaths struct {
	repoRoot  string
	kubectl   string
	kustomize string
	manager   string
}

// loadPaths reads the binaries from the environment and fails, saying how to run the suite, when
// one is missing: the suite must not pass by testing nothing.
func loadPaths() (testPaths, error) {
	if err := support.RequireFiles(binaryVars...); err != nil {
		return testPaths{}, fmt.Errorf("%w. The end-to-end tests need the local cluster's binaries, kustomize and "+
			"bin/manager: run them with `make test-e2e`, which builds them and sets them", err)
	}
	// go test runs in the package's directory, tests/e2e.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return testPaths{}, err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return testPaths{}, fmt.Errorf("repository root not found from the working directory: %w", err)
	}
	return testPaths{
		repoRoot:  root,
		kubectl:   os.Getenv("KUBECTL"),
		kustomize: os.Getenv("KUSTOMIZE"),
		manager:   os.Getenv("MANAGER"),
	}, nil
}

// applyLocalConfig applies config/local (CRDs, RBAC, the operator's ServiceAccount) as the admin,
// server-side as `make install` does: the CRDs are too large for client-side apply.
func applyLocalConfig(ctx context.Context, kubeconfig string) {
	build := exec.CommandContext(ctx, paths.kustomize, "build", filepath.Join(paths.repoRoot, "config", "local"))
	var manifests, stderr bytes.Buffer
	build.Stdout, build.Stderr = &manifests, &stderr
	Expect(build.Run()).To(Succeed(), "kustomize build config/local: %s", stderr.String())

	apply := exec.CommandContext(ctx, paths.kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", "-")
	apply.Stdin = &manifests
	out, err := apply.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl apply --server-side of config/local:\n%s", out)
	GinkgoWriter.Printf("Applied config/local:\n%s", out)
}

// writeOperatorKubeconfig mints a token of the operator's ServiceAccount through the TokenRequest
// API and writes a kubeconfig that holds the cluster's address and CA and that token only, so that
// the operator runs with exactly the permissions config/rbac grants it.
func writeOperatorKubeconfig(ctx context.Context, adminKubeconfig string) string {
	admin, err := clientcmd.LoadFromFile(adminKubeconfig)
	Expect(err).NotTo(HaveOccurred())
	current := admin.Contexts[admin.CurrentContext]
	Expect(current).NotTo(BeNil(), "current context of %s", adminKubeconfig)
	server := admin.Clusters[current.Cluster]
	Expect(server).NotTo(BeNil(), "cluster of %s", adminKubeconfig)

	// Longer than the suite may run (go test -timeout); the API server may extend it.
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To[int64](2 * 60 * 60),
	}}
	token, err := clientset.CoreV1().ServiceAccounts(operatorNamespace).
		CreateToken(ctx, operatorServiceAccount, request, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred(), "TokenRequest for ServiceAccount %s/%s", operatorNamespace, operatorServiceAccount)

	const name = "oaat-local"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   server.Server,
		CertificateAuthorityData: server.CertificateAuthorityData,
	}
	cfg.AuthInfos[operatorServiceAccount] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: operatorServiceAccount, Namespace: operatorNamespace}
	cfg.CurrentContext = name
	path := filepath.Join(cluster.StateDir, "operator.kubeconfig")
	Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	Expect(os.Chmod(path, 0o600)).To(Succeed())

	// The kubeconfig must authenticate as the ServiceAccount and as nothing more.
	saCfg, err := clientcmd.BuildConfigFromFlags("", path)
	Expect(err).NotTo(HaveOccurred())
	saClient, err := kubernetes.NewForConfig(saCfg)
	Expect(err).NotTo(HaveOccurred())
	review, err := saClient.AuthenticationV1().SelfSubjectReviews().Create(ctx,
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(review.Status.UserInfo.Username).To(Equal(operatorUser))
	Expect(review.Status.UserInfo.Groups).NotTo(ContainElement("system:masters"))
	return path
}

// operatorUser is the user name the operator's token authenticates as.
const operatorUser = "system:serviceaccount:" + operatorNamespace + ":" + operatorServiceAccount

func itoa(i int) string { return strconv.Itoa(i) }

func joinLines(lines []string) string { return strings.Join(lines, "\n") }
