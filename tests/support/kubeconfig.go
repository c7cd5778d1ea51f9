package support

import (
	"context"
	"fmt"
	"os"
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
// exactly the permissions granted to the ServiceAccount. It checks that the kubeconfig
// authenticates as the ServiceAccount and as nothing more.
func WriteServiceAccountKubeconfig(ctx context.Context, admin kubernetes.Interface, adminKubeconfig, namespace, name, path string, ttl time.Duration) error {
	adminCfg, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		return err
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

	const contextName = "service-account"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server.Server, CertificateAuthorityData: server.CertificateAuthorityData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: name, Namespace: namespace}
	cfg.CurrentContext = contextName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return err
	}
	if err := os.Chmod(path, 0o600); err != nil {
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

// ServiceAccountUser is the user name a token of the ServiceAccount authenticates as.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}
