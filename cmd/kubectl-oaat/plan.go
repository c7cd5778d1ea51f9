package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/forecast"
	"github.com/oaat-io/oaat-operator/internal/itemsource"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/statusview"
)

const (
	// maxPlanHorizon bounds --for: the forecast replays the planner once or twice per run.
	maxPlanHorizon = 31 * 24 * time.Hour
	// planPasses bounds the passes of one forecast of the plugin.
	planPasses = 20000
)

// planOptions are the flags of `kubectl oaat plan`.
type planOptions struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	horizon time.Duration
}

// newPlanCommand returns `plan GROUP`, which shows the group's predicted runs.
func newPlanCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &planOptions{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "plan GROUP",
		Short: "Predict which items of an OaatGroup run when over the next hours, if every run succeeds in its usual time, and the deadlines that would be missed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().DurationVar(&o.horizon, "for", 24*time.Hour, "How far ahead to predict (at most 744h)")
	return cmd
}

// run reads the group and what its decision reads, and writes its forecast from now.
func (o *planOptions) run(ctx context.Context, name string) error {
	if o.horizon <= 0 || o.horizon > maxPlanHorizon {
		return fmt.Errorf("--for %s: give a positive duration of at most %s", o.horizon, maxPlanHorizon)
	}
	c, namespace, err := connect(o.flags)
	if err != nil {
		return err
	}
	in, err := readPlanInput(ctx, c, namespace, name)
	if err != nil {
		return err
	}
	// Status keeps whole seconds, so do the forecast's times.
	return writePlan(o.streams.Out, in, time.Now().Truncate(time.Second), o.horizon)
}

// writePlan writes the forecast of the group from now over the horizon, as plan prints it.
func writePlan(w io.Writer, in planner.Input, now time.Time, horizon time.Duration) error {
	in.Now = now
	f := forecast.Predict(in, forecast.Options{Horizon: horizon, MaxPasses: planPasses, DefaultRun: forecast.DefaultRun})
	return statusview.WriteForecast(w, in.Group, f, forecast.Assess(in.Group, f))
}

// readPlanInput reads what the operator's decision for the group reads, from the API server: the
// group, its OaatType, its pods, its OaatRuns, the ConfigMaps it takes items from, the locks it
// names and its namespace's labels (unread when forbidden, as the operator reads them fail-closed).
func readPlanInput(ctx context.Context, c client.Client, namespace, name string) (planner.Input, error) {
	group := &v1alpha1.OaatGroup{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, group); err != nil {
		return planner.Input{}, groupError(err, namespace, name)
	}
	in := planner.Input{Group: group}
	typ := &v1alpha1.OaatType{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: group.Spec.OaatType}, typ); {
	case err == nil:
		in.Type = typ
	case !apierrors.IsNotFound(err):
		return planner.Input{}, fmt.Errorf("reading OaatType %s: %w", group.Spec.OaatType, err)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.LabelGroup: name}); err != nil {
		return planner.Input{}, fmt.Errorf("listing the pods of the group: %w", err)
	}
	in.Pods = pods.Items
	runs := &v1alpha1.OaatRunList{}
	if err := c.List(ctx, runs, client.InNamespace(namespace)); err != nil {
		return planner.Input{}, fmt.Errorf("listing OaatRuns: %w", err)
	}
	for _, run := range runs.Items {
		if run.Spec.OaatGroup == name {
			in.OnDemandRuns = append(in.OnDemandRuns, run)
		}
	}
	var err error
	if in.ConfigMaps, err = readItemSources(ctx, c, group); err != nil {
		return planner.Input{}, err
	}
	if in.Locks, err = readLocks(ctx, c, group); err != nil {
		return planner.Input{}, err
	}
	return in, nil
}

// readItemSources reads the ConfigMaps named by spec.oaatItemsFrom; a missing one is left out.
func readItemSources(ctx context.Context, c client.Client, group *v1alpha1.OaatGroup) (map[string]*corev1.ConfigMap, error) {
	found := map[string]*corev1.ConfigMap{}
	for _, name := range itemsource.Names(&group.Spec) {
		cm := &corev1.ConfigMap{}
		switch err := c.Get(ctx, client.ObjectKey{Namespace: group.Namespace, Name: name}, cm); {
		case err == nil:
			found[name] = cm
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading ConfigMap %s: %w", name, err)
		}
	}
	return found, nil
}

// readLocks reads the OaatLocks and ClusterOaatLocks the group names, as they are held now, and
// the labels of its namespace; a missing lock is left out.
func readLocks(ctx context.Context, c client.Client, group *v1alpha1.OaatGroup) (locks.Input, error) {
	in := locks.Input{Locks: map[string]v1alpha1.Lock{}}
	read := func(key client.ObjectKey, lock v1alpha1.Lock) error {
		switch err := c.Get(ctx, key, lock); {
		case err == nil:
			in.Locks[lock.LockKey()] = lock
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("reading lock %s: %w", key.Name, err)
		}
		return nil
	}
	for _, name := range group.Spec.Locks {
		if err := read(client.ObjectKey{Namespace: group.Namespace, Name: name}, &v1alpha1.OaatLock{}); err != nil {
			return in, err
		}
	}
	for _, name := range group.Spec.ClusterLocks {
		if err := read(client.ObjectKey{Name: name}, &v1alpha1.ClusterOaatLock{}); err != nil {
			return in, err
		}
	}
	if len(group.Spec.ClusterLocks) > 0 {
		ns := &corev1.Namespace{}
		switch err := c.Get(ctx, client.ObjectKey{Name: group.Namespace}, ns); {
		case err == nil:
			in.NamespaceLabels, in.NamespaceRead = ns.Labels, true
		case !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err):
			return in, fmt.Errorf("reading namespace %s: %w", group.Namespace, err)
		}
	}
	return in, nil
}
