package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/statusview"
	"github.com/oaat-io/oaat-operator/internal/version"
)

// operatorSelector selects the manager's Deployment of every installation of the operator.
var operatorSelector = labels.SelectorFromSet(labels.Set{v1alpha1.LabelName: v1alpha1.NameValue, v1alpha1.LabelControlPlane: v1alpha1.ControlPlaneValue})

// newVersionCommand returns `version`, which prints the plugin's version and, as kubectl version
// prints the API server's, the version of each operator the cluster runs.
func newVersionCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version and the operator's, read from its Deployment; warn when their minor versions differ",
		Long: "Print the plugin's version and that of each operator the cluster runs, read from the label " +
			v1alpha1.LabelVersion + " of its Deployment, found by its labels in every namespace the user may list " +
			"Deployments of, or in the namespace --namespace names. Warn when the plugin and an operator differ in " +
			"their minor version; fail when no operator is found.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plugin := version.Get()
			statusview.WriteClientVersion(streams.Out, plugin)
			if clientOnly {
				return nil
			}
			operators, err := findOperators(cmd.Context(), flags)
			if err != nil {
				return err
			}
			statusview.WriteServerVersions(streams.Out, streams.ErrOut, plugin.Version, operators)
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Print the plugin's version only, without reaching the cluster")
	return cmd
}

// findOperators lists the manager Deployments of the namespace --namespace names, or of every
// namespace when it names none (not the kubeconfig's namespace: the operator is seldom in the
// user's). None found is an error, as is a refused list, with what to do about it.
func findOperators(ctx context.Context, flags *genericclioptions.ConfigFlags) ([]statusview.Operator, error) {
	c, _, err := connect(flags)
	if err != nil {
		return nil, err
	}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: operatorSelector}}
	namespace := ""
	if flags.Namespace != nil {
		namespace = *flags.Namespace
	}
	where := "any namespace"
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
		where = fmt.Sprintf("namespace %q", namespace)
	}
	deployments := &appsv1.DeploymentList{}
	switch err := c.List(ctx, deployments, opts...); {
	case apierrors.IsForbidden(err) && namespace == "":
		return nil, fmt.Errorf("cannot read the operator's version: listing Deployments in all namespaces is forbidden, "+
			"name the operator's namespace with --namespace: %w", err)
	case err != nil:
		return nil, fmt.Errorf("cannot read the operator's version: listing Deployments in %s: %w", where, err)
	}
	if len(deployments.Items) == 0 {
		return nil, fmt.Errorf("cannot read the operator's version: no Deployment labelled %s in %s", operatorSelector, where)
	}
	operators := make([]statusview.Operator, 0, len(deployments.Items))
	for _, d := range deployments.Items {
		operators = append(operators, statusview.Operator{Namespace: d.Namespace, Name: d.Name, Version: d.Labels[v1alpha1.LabelVersion]})
	}
	return operators, nil
}
