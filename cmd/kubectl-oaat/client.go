package main

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// The resources as kubectl names them in its messages ("oaatrun.oaat.io/x created").
var (
	groupResource = "oaatgroup." + v1alpha1.GroupVersion.Group
	runResource   = "oaatrun." + v1alpha1.GroupVersion.Group
)

// connect returns a client of the cluster that the standard kubectl flags name (kubeconfig,
// context, server...) and the namespace they name.
func connect(flags *genericclioptions.ConfigFlags) (client.WithWatch, string, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	namespace, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("finding the namespace: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		return nil, "", fmt.Errorf("registering the oaat.io types: %w", err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", fmt.Errorf("connecting to the cluster: %w", err)
	}
	return c, namespace, nil
}

// groupError explains a failed request on the OaatGroup name in namespace: a missing group is
// said in so many words, as it is the likely mistake.
func groupError(err error, namespace, name string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("OaatGroup %q not found in namespace %q: %w", name, namespace, err)
	}
	return fmt.Errorf("OaatGroup %q in namespace %q: %w", name, namespace, err)
}
