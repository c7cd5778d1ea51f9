package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/statusview"
)

// refreshEvery re-renders a watched table though no group changed, so that its ages, and its
// on-demand runs (which are not watched), stay true.
const refreshEvery = 2 * time.Second

// statusOptions are the flags of `kubectl oaat status`.
type statusOptions struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	watch   bool
}

// newStatusCommand returns `status [GROUP]`, which shows one table per group.
func newStatusCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &statusOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "status [GROUP]",
		Short: "Show each item of the OaatGroups of a namespace (last success, last failure, what runs) and the on-demand runs that wait or run",
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

// run shows the groups of the namespace, or the group name, once or, with --watch, until the
// context ends.
func (o *statusOptions) run(ctx context.Context, name string) error {
	c, namespace, err := connect(o.flags)
	if err != nil {
		return err
	}
	opts := []client.ListOption{client.InNamespace(namespace)}
	if name != "" {
		opts = append(opts, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	}
	if !o.watch {
		return o.show(ctx, c, namespace, opts, false)
	}
	return o.follow(ctx, c, namespace, opts)
}

// follow shows the status again whenever a group changes, and every refreshEvery. The groups are
// listed once, then kept up to date from a watch that resumes from the last resourceVersion seen
// when the API server ends it (as it does after its request timeout); only a watch that cannot
// resume (its resourceVersion expired) lists them again. The OaatRuns, which are not watched, are
// listed at each refresh, not at each change of a group.
func (o *statusOptions) follow(ctx context.Context, c client.WithWatch, namespace string, opts []client.ListOption) error {
	runs, err := runsByGroup(ctx, c, namespace)
	if err != nil {
		return err
	}
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	for ctx.Err() == nil {
		groups := &v1alpha1.OaatGroupList{}
		if err := c.List(ctx, groups, opts...); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("listing OaatGroups: %w", err)
		}
		byName := make(map[string]v1alpha1.OaatGroup, len(groups.Items))
		for _, g := range groups.Items {
			byName[g.Name] = g
		}
		if err := o.render(byName, runs, true); err != nil {
			return err
		}
		w, err := watchtools.NewRetryWatcherWithContext(ctx, groups.ResourceVersion, &cache.ListWatch{
			WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
				return c.Watch(ctx, &v1alpha1.OaatGroupList{}, append(slices.Clone(opts), &client.ListOptions{Raw: &options})...)
			},
		})
		if err != nil {
			return fmt.Errorf("watching OaatGroups: %w", err)
		}
		runs, err = o.followWatch(ctx, c, namespace, w, byName, runs, tick.C)
		w.Stop()
		if err != nil {
			return err
		}
	}
	return nil
}

// followWatch applies the watch's events to the groups byName and shows them, until the context
// ends or the watch cannot go on (then the caller lists again); it returns the OaatRuns last read.
func (o *statusOptions) followWatch(ctx context.Context, c client.Client, namespace string, w watch.Interface,
	byName map[string]v1alpha1.OaatGroup, runs map[string][]v1alpha1.OaatRun, tick <-chan time.Time) (map[string][]v1alpha1.OaatRun, error) {
	for {
		select {
		case <-ctx.Done():
			return runs, nil
		case <-tick:
			var err error
			if runs, err = runsByGroup(ctx, c, namespace); err != nil {
				if ctx.Err() != nil {
					return runs, nil
				}
				return runs, err
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return runs, nil
			}
			g, isGroup := ev.Object.(*v1alpha1.OaatGroup)
			switch {
			case ev.Type == watch.Error || !isGroup:
				// An expired resourceVersion: the watch cannot resume, list again.
				return runs, nil
			case ev.Type == watch.Deleted:
				delete(byName, g.Name)
			case ev.Type == watch.Added || ev.Type == watch.Modified:
				byName[g.Name] = *g
			default: // bookmarks carry no change
				continue
			}
		}
		if err := o.render(byName, runs, true); err != nil {
			return runs, err
		}
	}
}

// show writes the table of each group that opts select, with the group's on-demand runs.
func (o *statusOptions) show(ctx context.Context, c client.Client, namespace string, opts []client.ListOption, redraw bool) error {
	groups := &v1alpha1.OaatGroupList{}
	if err := c.List(ctx, groups, opts...); err != nil {
		return fmt.Errorf("listing OaatGroups: %w", err)
	}
	runs, err := runsByGroup(ctx, c, namespace)
	if err != nil {
		return err
	}
	byName := make(map[string]v1alpha1.OaatGroup, len(groups.Items))
	for _, g := range groups.Items {
		byName[g.Name] = g
	}
	return o.render(byName, runs, redraw)
}

// render writes the table of each group, by name, with the group's on-demand runs; a redraw
// clears a terminal first and starts with the time.
func (o *statusOptions) render(groups map[string]v1alpha1.OaatGroup, runs map[string][]v1alpha1.OaatRun, redraw bool) error {
	out := o.streams.Out
	if redraw && isTerminal(out) {
		fmt.Fprint(out, "\033[H\033[2J")
	}
	now := time.Now()
	if redraw {
		fmt.Fprintf(out, "%s\n", now.Format(time.TimeOnly))
	}
	if len(groups) == 0 {
		_, err := fmt.Fprintln(out, "No OaatGroups found.")
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		g := groups[name]
		if err := statusview.Write(out, &g, runs[g.Name], now); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	return nil
}

// runsByGroup returns the OaatRuns of the namespace by the name of their group. A cluster whose
// operator predates OaatRun has none.
func runsByGroup(ctx context.Context, c client.Client, namespace string) (map[string][]v1alpha1.OaatRun, error) {
	list := &v1alpha1.OaatRunList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing OaatRuns: %w", err)
	}
	byGroup := make(map[string][]v1alpha1.OaatRun)
	for _, r := range list.Items {
		byGroup[r.Spec.OaatGroup] = append(byGroup[r.Spec.OaatGroup], r)
	}
	return byGroup, nil
}

// isTerminal reports whether w is a terminal, where a redraw may clear the screen first.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
