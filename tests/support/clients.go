package support

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Clients are a suite's clients of one cluster, all from one kubeconfig: none of them caches,
// so every assertion reads the API server itself.
type Clients struct {
	Config *rest.Config
	// Client knows the built-in kinds and oaat.io's.
	Client    client.Client
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
}

// NewClients builds the clients of the kubeconfig at path.
func NewClients(path string) (Clients, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return Clients{}, fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return Clients{}, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return Clients{}, err
	}
	c := Clients{Config: cfg}
	if c.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return Clients{}, err
	}
	if c.Clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return Clients{}, err
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return Clients{}, err
	}
	return c, nil
}
