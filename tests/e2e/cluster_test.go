//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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

// localCluster is the suite's own instance of hack/cluster/cluster.sh, in a state directory that
// no one else uses.
type localCluster struct {
	script   string
	stateDir string
}

// run runs cluster.sh with the arguments and returns its standard output; its standard error
// (progress) goes to the Ginkgo writer.
func (c *localCluster) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.script, args...)
	cmd.Env = append(os.Environ(), "OAAT_CLUSTER_DIR="+c.stateDir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(&stderr, GinkgoWriter)
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("cluster.sh %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// up starts the cluster and returns the path of its admin kubeconfig.
func (c *localCluster) up(ctx context.Context) (string, error) {
	out, err := c.run(ctx, "up")
	if err != nil {
		return "", err
	}
	lines := strings.Fields(out)
	if len(lines) == 0 {
		return "", errors.New("cluster.sh up printed no kubeconfig path")
	}
	return lines[len(lines)-1], nil
}

// down stops the cluster and keeps its data, so that the next run starts warm. It is not bound to
// the spec's context: it must run even after the suite timed out.
func (c *localCluster) down(context.Context) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := c.run(ctx, "down")
	return err
}

// pids returns the recorded pid of each component.
func (c *localCluster) pids() map[string]int {
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(c.stateDir, "pids", "*.pid"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return pids
}

// processAlive reports whether the process exists and is not a zombie (a zombie has exited and
// only waits to be reaped).
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may hold spaces.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
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
	path := filepath.Join(cluster.stateDir, "operator.kubeconfig")
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
