package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// suspendVerb describes one of the two commands that set spec.suspend.
type suspendVerb struct {
	use, short, done string
}

// suspendVerbs are the suspend (true) and resume (false) commands.
var suspendVerbs = map[bool]suspendVerb{
	true:  {use: "suspend", short: "Start no new item of an OaatGroup (spec.suspend=true); a running item finishes", done: "suspended"},
	false: {use: "resume", short: "Let an OaatGroup start items again (spec.suspend=false)", done: "resumed"},
}

// newSuspendCommand returns `suspend GROUP` when suspend is true and `resume GROUP` when false:
// both set the group's spec.suspend to suspend.
func newSuspendCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, suspend bool) *cobra.Command {
	verb := suspendVerbs[suspend]
	return &cobra.Command{
		Use:   verb.use + " GROUP",
		Short: verb.short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return setSuspend(cmd.Context(), flags, streams, args[0], suspend)
		},
	}
}

// setSuspend sets spec.suspend of the OaatGroup name with a JSON merge patch, which touches no
// other field, and says so. Resuming leaves the pause_new_jobs annotation alone: a warning says
// when it still holds the group.
func setSuspend(ctx context.Context, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, name string, suspend bool) error {
	c, namespace, err := connect(flags)
	if err != nil {
		return err
	}
	g := &v1alpha1.OaatGroup{}
	g.Namespace, g.Name = namespace, name
	patch := fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, suspend)
	if err := c.Patch(ctx, g, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return groupError(err, namespace, name)
	}
	fmt.Fprintf(streams.Out, "%s/%s %s\n", groupResource, name, suspendVerbs[suspend].done)
	if !suspend && g.Annotations[v1alpha1.AnnotationPauseNewJobs] == "true" {
		fmt.Fprintf(streams.ErrOut, "Warning: the annotation %s=\"true\" still suspends OaatGroup %q; remove it with: kubectl annotate oaatgroup %s -n %s %s-\n",
			v1alpha1.AnnotationPauseNewJobs, name, name, namespace, v1alpha1.AnnotationPauseNewJobs)
	}
	return nil
}
