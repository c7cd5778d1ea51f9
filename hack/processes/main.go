// Command processes starts, finds and stops the daemons of a state directory (devkit.Daemons):
// the one implementation of process supervision, which hack/lib/processes.sh calls for the local
// cluster's components and the demo's manager.
//
//	processes start -state DIR NAME BINARY [ARG...]   prints the pid
//	processes pid -state DIR NAME                     prints the pid; exits 1 unless it runs
//	processes stop -state DIR [-timeout D] NAME       prints what it stopped, if anything
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "processes:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: processes start|pid|stop -state DIR NAME [BINARY ARG...]")
	}
	fs := flag.NewFlagSet("processes "+args[0], flag.ContinueOnError)
	state := fs.String("state", "", "the state directory (absolute)")
	timeout := fs.Duration("timeout", 15*time.Second, "stop: how long after SIGTERM SIGKILL follows")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *state == "" || fs.NArg() == 0 {
		return fmt.Errorf("%s: -state DIR and NAME are required", args[0])
	}
	d := devkit.Daemons{StateDir: *state}
	name := fs.Arg(0)
	switch args[0] {
	case "start":
		if fs.NArg() < 2 {
			return fmt.Errorf("start: NAME BINARY [ARG...]")
		}
		pid, err := d.Start(name, fs.Arg(1), fs.Args()[2:]...)
		if err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
		fmt.Println(pid)
	case "pid":
		pid, ok := d.PID(name)
		if !ok {
			os.Exit(1)
		}
		fmt.Println(pid)
	case "stop":
		pid, killed, err := d.Stop(name, *timeout)
		if err != nil {
			return fmt.Errorf("stopping %s: %w", name, err)
		}
		switch {
		case pid == 0:
		case killed:
			fmt.Printf("stopped %s (pid %d) with SIGKILL, still running %v after SIGTERM\n", name, pid, *timeout)
		default:
			fmt.Printf("stopped %s (pid %d)\n", name, pid)
		}
	default:
		return fmt.Errorf("unknown command %q: start, pid or stop", args[0])
	}
	return nil
}
