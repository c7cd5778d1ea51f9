package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// newUnparkCommand returns `unpark GROUP ITEM`, which runs a parked item again: an OaatRun, which
// the operator starts even though the item is parked, and which unparks it as it starts.
func newUnparkCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &runOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "unpark GROUP ITEM",
		Short: "Run a parked item of an OaatGroup again (creates an OaatRun, which unparks it); --wait for its result",
		Long: "Run a parked item of an OaatGroup again: an item is parked after an exit code of spec.exitCodes.doNotRetry, " +
			"or once its failures reach spec.maxConsecutiveFailures. Creates an OaatRun of the item, which the operator " +
			"starts when the group has no item running and which unparks the item as it starts: it stays unparked if the " +
			"run succeeds, and parks again if the run says so once more. An item that is not parked is left alone. " +
			"(resume is for a suspended group.)",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.unpark(cmd.Context(), args[0], args[1])
		},
	}
	o.addFlags(cmd)
	return cmd
}

// unpark creates the OaatRun of item if the group's status says it is parked.
func (o *runOptions) unpark(ctx context.Context, group, item string) error {
	c, namespace, g, err := o.getGroup(ctx, group)
	if err != nil {
		return err
	}
	if !hasItem(g, item) {
		return fmt.Errorf("OaatGroup %q has no item %q (in spec.oaatItems, or in status.items as the operator last read its ConfigMaps)", group, item)
	}
	if !parked(g, item) {
		fmt.Fprintf(o.streams.Out, "item %q of OaatGroup %q is not parked\n", item, group)
		return nil
	}
	return o.createRun(ctx, c, namespace, group, item)
}

// parked reports whether the group's status says that item waits because it is parked.
func parked(g *v1alpha1.OaatGroup, item string) bool {
	for _, it := range g.Status.Items {
		if it.Name == item {
			return it.WaitReason == v1alpha1.WaitParked
		}
	}
	return false
}
