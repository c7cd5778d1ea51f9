package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/statusview"
)

// newLocksCommand returns `locks [LOCK]`, which shows the OaatLocks of the namespace and the
// ClusterOaatLocks: capacity, holders and the groups waiting for them.
func newLocksCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "locks [LOCK]",
		Short: "Show the OaatLocks of a namespace and the ClusterOaatLocks: their capacity, which runs hold them and which groups wait for them",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return showLocks(cmd.Context(), flags, streams, name)
		},
	}
}

// showLocks writes the table of the locks of the namespace and of the cluster, or of the lock
// name (an OaatLock, or a ClusterOaatLock as name or ClusterOaatLock/name). A user who may not
// list ClusterOaatLocks sees the namespace's OaatLocks and a note.
func showLocks(ctx context.Context, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, name string) error {
	c, namespace, err := connect(flags)
	if err != nil {
		return err
	}
	clusterName, clusterOnly := strings.CutPrefix(name, v1alpha1.KindClusterOaatLock+"/")
	byName := func(n string) []client.ListOption {
		if n == "" {
			return nil
		}
		return []client.ListOption{client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", n)}}
	}
	var all []v1alpha1.Lock
	if !clusterOnly {
		locks := &v1alpha1.OaatLockList{}
		if err := c.List(ctx, locks, append(byName(name), client.InNamespace(namespace))...); err != nil {
			return fmt.Errorf("listing OaatLocks in namespace %q: %w", namespace, err)
		}
		for i := range locks.Items {
			all = append(all, &locks.Items[i])
		}
	}
	clusterLocks := &v1alpha1.ClusterOaatLockList{}
	switch err := c.List(ctx, clusterLocks, byName(clusterName)...); {
	case apierrors.IsForbidden(err):
		fmt.Fprintf(streams.ErrOut, "Not showing ClusterOaatLocks: %v\n", err)
	case err != nil:
		return fmt.Errorf("listing ClusterOaatLocks: %w", err)
	}
	for i := range clusterLocks.Items {
		all = append(all, &clusterLocks.Items[i])
	}
	if len(all) == 0 {
		if name != "" {
			return fmt.Errorf("OaatLock %q not found in namespace %q, nor a ClusterOaatLock of that name", name, namespace)
		}
		fmt.Fprintf(streams.Out, "No OaatLocks in namespace %s, no ClusterOaatLocks.\n", namespace)
		return nil
	}
	groups := &v1alpha1.OaatGroupList{}
	if err := c.List(ctx, groups, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing OaatGroups in namespace %q: %w", namespace, err)
	}
	return statusview.WriteLocks(streams.Out, all, groups.Items, time.Now())
}
