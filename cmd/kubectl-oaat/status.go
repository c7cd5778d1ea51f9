package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/statusview"
)

// refreshEvery re-renders a watched table though nothing changed, so that its ages stay true.
const refreshEvery = 2 * time.Second

type statusOptions struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	watch   bool
}

func newStatusCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &statusOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "status [GROUP]",
		Short: "Show each item of the OaatGroups of a namespace: last success, last failure, failures, what runs",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return o.run(cmd.Context(), name)
		},
	}
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false, "Keep showing the status as it changes, until interrupted")
	return cmd
}

func (o *statusOptions) run(ctx context.Context, name string) error {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return err
	}
	namespace, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	opts := []client.ListOption{client.InNamespace(namespace)}
	if name != "" {
		opts = append(opts, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	}
	if !o.watch {
		return o.show(ctx, c, opts, false)
	}
	return o.follow(ctx, c, opts)
}

// follow shows the status again whenever a group changes, and every refreshEvery.
func (o *statusOptions) follow(ctx context.Context, c client.WithWatch, opts []client.ListOption) error {
	w, err := c.Watch(ctx, &v1alpha1.OaatGroupList{}, opts...)
	if err != nil {
		return err
	}
	defer w.Stop()
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	for {
		if err := o.show(ctx, c, opts, true); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the watch of OaatGroups ended")
			}
		case <-tick.C:
		}
	}
}

func (o *statusOptions) show(ctx context.Context, c client.Client, opts []client.ListOption, redraw bool) error {
	groups := &v1alpha1.OaatGroupList{}
	if err := c.List(ctx, groups, opts...); err != nil {
		return err
	}
	out := o.streams.Out
	if redraw && isTerminal(out) {
		fmt.Fprint(out, "\033[H\033[2J")
	}
	now := time.Now()
	if redraw {
		fmt.Fprintf(out, "%s\n", now.Format(time.TimeOnly))
	}
	if len(groups.Items) == 0 {
		_, err := fmt.Fprintln(out, "No OaatGroups found.")
		return err
	}
	for i := range groups.Items {
		if err := statusview.Write(out, &groups.Items[i], now); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	return nil
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
