package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/statusview"
)

// newLocksCommand returns `locks [LOCK]`, which shows the OaatLocks of the namespace: capacity,
// holders and the groups waiting for them.
func newLocksCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "locks [LOCK]",
		Short: "Show the OaatLocks of a namespace: their capacity, which runs hold them and which groups wait for them",
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

// showLocks writes the table of the locks of the namespace, or of the lock name.
func showLocks(ctx context.Context, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, name string) error {
	c, namespace, err := connect(flags)
	if err != nil {
		return err
	}
	opts := []client.ListOption{client.InNamespace(namespace)}
	if name != "" {
		opts = append(opts, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	}
	locks := &v1alpha1.OaatLockList{}
	if err := c.List(ctx, locks, opts...); err != nil {
		return fmt.Errorf("listing OaatLocks in namespace %q: %w", namespace, err)
	}
	if len(locks.Items) == 0 {
		if name != "" {
			return fmt.Errorf("OaatLock %q not found in namespace %q", name, namespace)
		}
		fmt.Fprintf(streams.Out, "No OaatLocks in namespace %s.\n", namespace)
		return nil
	}
	groups := &v1alpha1.OaatGroupList{}
	if err := c.List(ctx, groups, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing OaatGroups in namespace %q: %w", namespace, err)
	}
	return statusview.WriteLocks(streams.Out, locks.Items, groups.Items, time.Now())
}
