// Command kubectl-oaat is a kubectl plugin for oaat-operator: `kubectl oaat status` shows what
// each OaatGroup's items did and which one runs.
package main

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func main() {
	if err := newRootCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}).Execute(); err != nil {
		os.Exit(1)
	}
}

func newRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:          "kubectl-oaat",
		Short:        "Inspect the OaatGroups of oaat-operator",
		SilenceUsage: true,
	}
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newStatusCommand(flags, streams))
	return root
}
