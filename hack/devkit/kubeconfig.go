package devkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// WriteServiceAccountKubeconfig mints a token of the ServiceAccount namespace/name through the
// TokenRequest API, valid for ttl, and writes to path a kubeconfig that holds the address and CA
// of the cluster of adminKubeconfig and that token only, so that a process run with it has
// exactly the permissions granted to the ServiceAccount. The token is in a file of its own,
// path.token, which client-go reads again every minute: writing the kubeconfig again hands a
// process that runs with it a fresh token without a restart. Both files are replaced atomically.
// It checks that the kubeconfig authenticates as the ServiceAccount and as nothing more.
func WriteServiceAccountKubeconfig(ctx context.Context, admin kubernetes.Interface, adminKubeconfig, namespace, name, path string, ttl time.Duration) error {
	adminCfg, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		return err
	}
	if err := clientcmdapi.FlattenConfig(adminCfg); err != nil { // a CA named by its file, inlined
		return fmt.Errorf("reading the files %s names: %w", adminKubeconfig, err)
	}
	current := adminCfg.Contexts[adminCfg.CurrentContext]
	if current == nil || adminCfg.Clusters[current.Cluster] == nil {
		return fmt.Errorf("%s has no current context with a cluster", adminKubeconfig)
	}
	server := adminCfg.Clusters[current.Cluster]
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl / time.Second))}}
	token, err := admin.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, request, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("TokenRequest for ServiceAccount %s/%s: %w", namespace, name, err)
	}

	path, err = filepath.Abs(path) // the kubeconfig names the token file by its absolute path
	if err != nil {
		return err
	}
	tokenPath := path + ".token"
	if err := writeFileAtomically(tokenPath, []byte(token.Status.Token+"\n")); err != nil {
		return err
	}
	const contextName = "service-account"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server.Server, CertificateAuthorityData: server.CertificateAuthorityData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{TokenFile: tokenPath}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: name, Namespace: namespace}
	cfg.CurrentContext = contextName
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	if err := writeFileAtomically(path, data); err != nil {
		return err
	}

	restCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return err
	}
	saClient, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	review, err := saClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("asking who the kubeconfig %s authenticates as: %w", path, err)
	}
	user := review.Status.UserInfo
	if want := ServiceAccountUser(namespace, name); user.Username != want || slices.Contains(user.Groups, "system:masters") {
		return fmt.Errorf("the kubeconfig %s authenticates as %s in groups %v, want %s only", path, user.Username, user.Groups, want)
	}
	return nil
}

// writeFileAtomically writes data to path, readable by its owner only, through a temporary file
// renamed over it, so that a reader sees the old content or the new, never a part.
func writeFileAtomically(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ServiceAccountUser is the user name a token of the ServiceAccount authenticates as.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}
