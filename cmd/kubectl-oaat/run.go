package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duration"
)

// runOptions are the flags of `kubectl oaat run`.
type runOptions struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams

	ignoreBlackoutWindows bool
	ttl                   string
	wait                  bool
	timeout               time.Duration
}

// newRunCommand returns `run GROUP ITEM`, which creates an OaatRun: an on-demand run of the item now.
func newRunCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &runOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "run GROUP ITEM",
		Short: "Run an item of an OaatGroup now, outside its schedule (creates an OaatRun); --wait for its result",
		Long: "Run an item of an OaatGroup now, outside its schedule: creates an OaatRun, which the operator serves " +
			"oldest first, when the group has no item running. With --wait, show each change of the OaatRun's " +
			"phase and exit with success only if the run succeeded.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0], args[1])
		},
	}
	o.addFlags(cmd)
	return cmd
}

// addFlags adds the flags of the OaatRun that run and unpark create, and of --wait, and the check
// that --timeout comes with --wait.
func (o *runOptions) addFlags(cmd *cobra.Command) {
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Flags().Changed("timeout") && !o.wait {
			return fmt.Errorf("--timeout applies to --wait only")
		}
		return nil
	}
	cmd.Flags().BoolVar(&o.ignoreBlackoutWindows, "ignore-blackout-windows", false, "Let the run start inside one of the group's blackout windows")
	cmd.Flags().StringVar(&o.ttl, "ttl", "", "How long to keep the OaatRun once finished, e.g. 10m or 1d (default 1h, from the OaatRun API)")
	cmd.Flags().BoolVar(&o.wait, "wait", false, "Wait until the run has finished, showing each change; fail unless it succeeded")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 30*time.Minute, "With --wait, how long to wait before giving up (the run goes on)")
}

// getGroup checks the flags, connects and reads the group.
func (o *runOptions) getGroup(ctx context.Context, group string) (client.WithWatch, string, *v1alpha1.OaatGroup, error) {
	if o.ttl != "" {
		if _, err := duration.Parse(o.ttl); err != nil {
			return nil, "", nil, fmt.Errorf("--ttl: %w", err)
		}
	}
	c, namespace, err := connect(o.flags)
	if err != nil {
		return nil, "", nil, err
	}
	g := &v1alpha1.OaatGroup{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: group}, g); err != nil {
		return nil, "", nil, groupError(err, namespace, group)
	}
	return c, namespace, g, nil
}

// run checks the group, creates the OaatRun and, with --wait, follows it to its end.
func (o *runOptions) run(ctx context.Context, group, item string) error {
	c, namespace, g, err := o.getGroup(ctx, group)
	if err != nil {
		return err
	}
	if !hasItem(g, item) {
		// Not refused: the operator decides, and a ConfigMap may have given the item since.
		fmt.Fprintf(o.streams.ErrOut, "Warning: OaatGroup %q has no item %q (in spec.oaatItems, or in status.items as the operator last read its ConfigMaps): "+
			"unless it was just added, the operator rejects the OaatRun (%s)\n", group, item, v1alpha1.ReasonUnknownItem)
	}
	return o.createRun(ctx, c, namespace, group, item)
}

// createRun creates the OaatRun of item and, with --wait, follows it to its end.
func (o *runOptions) createRun(ctx context.Context, c client.WithWatch, namespace, group, item string) error {
	run := &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: group + "-"},
		Spec: v1alpha1.OaatRunSpec{
			OaatGroup:             group,
			Item:                  item,
			IgnoreBlackoutWindows: o.ignoreBlackoutWindows,
			TTLAfterFinished:      v1alpha1.Duration(o.ttl),
		},
	}
	if err := c.Create(ctx, run); err != nil {
		return fmt.Errorf("creating an OaatRun of item %q of OaatGroup %q: %w", item, group, err)
	}
	fmt.Fprintf(o.streams.Out, "%s/%s created\n", runResource, run.Name)
	if !o.wait {
		return nil
	}
	return waitForRun(ctx, c, client.ObjectKeyFromObject(run), o.timeout, o.streams.Out)
}

// hasItem reports whether item is one of the group's items as far as the group says: listed in
// spec.oaatItems, or in status.items, where the operator lists the items it read from
// spec.oaatItemsFrom (an entry waiting as Removed is no longer an item).
func hasItem(g *v1alpha1.OaatGroup, item string) bool {
	if slices.Contains(g.Spec.OaatItems, item) {
		return true
	}
	return slices.ContainsFunc(g.Status.Items, func(it v1alpha1.ItemStatus) bool {
		return it.Name == item && it.WaitReason != v1alpha1.WaitRemoved
	})
}
