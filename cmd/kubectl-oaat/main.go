// Command kubectl-oaat is a kubectl plugin for oaat-operator: `kubectl oaat status` shows what
// each OaatGroup's items did and which one runs, `kubectl oaat run` asks for an item to run now
// (an OaatRun) and can wait for its result, and `kubectl oaat suspend` and `resume` stop and
// restart a group's new runs, `kubectl oaat locks` shows the OaatLocks' holders and waiters,
// `kubectl oaat plan` predicts a group's next runs, `kubectl oaat history export` and `import`
// back up and restore a group's item history, and `kubectl oaat version` says the plugin's version
// and the operator's.
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

// newRootCommand returns the plugin's command with the standard kubectl connection flags and its
// subcommands, writing to streams (its errors too).
func newRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:          "kubectl-oaat",
		Short:        "Inspect and control the OaatGroups of oaat-operator",
		SilenceUsage: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(
		newStatusCommand(flags, streams),
		newRunCommand(flags, streams),
		newUnparkCommand(flags, streams),
		newSuspendCommand(flags, streams, true),
		newSuspendCommand(flags, streams, false),
		newLocksCommand(flags, streams),
		newPlanCommand(flags, streams),
		newHistoryCommand(flags, streams),
		newVersionCommand(flags, streams),
	)
	return root
}
