// Command local-operator runs the operator's manager on this machine, outside the cluster, as the
// operator's ServiceAccount (oaat-operator-system/oaat-operator-controller-manager): it holds
// exactly the permissions config/rbac grants, as it would in its Deployment. make demo uses it;
// the Go suites and programs call the same code (devkit.LocalOperator, devkit.ManagerFlags) and
// the manager runs as a daemon of devkit.Daemons, as the local cluster's components do.
//
// Usage: local-operator [-repo DIR] prepare | start | stop [--purge] | status
//
//	prepare  apply config/local (CRDs, RBAC, ServiceAccount), wait for the CRDs, mint a token of
//	         the ServiceAccount and write <state>/kubeconfig with it; prints that path
//	start    prepare, then start the manager unless it runs, and wait until it is ready; prints
//	         the path of its log
//	stop     SIGTERM, then SIGKILL after a bound; --purge also deletes the state directory
//	status   exits 0 if the manager runs
//
// Environment:
//
//	KUBECTL, KUSTOMIZE    binaries (prepare, start)
//	MANAGER               the manager binary, go build -o bin/manager ./cmd (start)
//	CLUSTER_KUBECONFIG    admin kubeconfig of the cluster (default: that of hack/cluster/cluster.sh)
//	OAAT_OPERATOR_DIR     state directory (default <repo>/.state/operator)
//	OAAT_OPERATOR_ARGS    extra manager arguments, split on spaces (start), e.g. --zap-log-level=debug
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

const (
	// name is the manager's daemon name: pids/manager.pid and logs/manager.log in the state dir.
	name = "manager"
	// tokenTTL is how long the manager's token is valid; client-go reads the token file again
	// every minute, so a later prepare hands a running manager a fresh one without a restart.
	tokenTTL = 24 * time.Hour
	// stopTimeout bounds the manager's graceful shutdown (it stops its controllers and releases
	// the Lease well within it); readyTimeout its start.
	stopTimeout  = 15 * time.Second
	readyTimeout = 60 * time.Second
	// lockTimeout bounds the wait for another start or stop of the same state directory.
	lockTimeout = 120 * time.Second
)

func main() {
	repo := flag.String("repo", ".", "the repository's root, where config/local and .state are")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: local-operator [-repo DIR] prepare | start | stop [--purge] | status")
	}
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code, err := run(ctx, *repo, flag.Args())
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "operator: error: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

// local is one state directory of the local operator.
type local struct {
	repo, state, clusterKubeconfig string
	daemons                        devkit.Daemons
}

func run(ctx context.Context, repo string, args []string) (int, error) {
	root, err := filepath.Abs(repo)
	if err != nil {
		return 1, err
	}
	state, err := filepath.Abs(cmp.Or(os.Getenv("OAAT_OPERATOR_DIR"), filepath.Join(root, ".state", "operator")))
	if err != nil {
		return 1, err
	}
	clusterDir := cmp.Or(os.Getenv("OAAT_CLUSTER_DIR"), filepath.Join(root, ".state", "cluster"))
	l := local{
		repo: root, state: state, daemons: devkit.Daemons{StateDir: state},
		clusterKubeconfig: cmp.Or(os.Getenv("CLUSTER_KUBECONFIG"), filepath.Join(clusterDir, "kubeconfig")),
	}
	switch {
	case len(args) == 1 && args[0] == "prepare":
		return 0, l.locked(func() error {
			if err := l.prepare(ctx); err != nil {
				return err
			}
			fmt.Println(l.kubeconfig())
			return nil
		})
	case len(args) == 1 && args[0] == "start":
		return 0, l.locked(func() error { return l.start(ctx) })
	case len(args) >= 1 && args[0] == "stop" && (len(args) == 1 || len(args) == 2 && args[1] == "--purge"):
		return 0, l.stop(len(args) == 2)
	case len(args) == 1 && args[0] == "status":
		return l.status(), nil
	}
	flag.Usage()
	return 2, nil
}

func (l local) kubeconfig() string    { return filepath.Join(l.state, "kubeconfig") }
func (l local) probeAddrFile() string { return filepath.Join(l.state, "probe-address") }

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "operator: "+format+"\n", args...) }

// locked runs f holding the state directory's lock: one start or stop at a time per state dir.
// The lock's descriptor is close-on-exec, so the manager does not inherit it.
func (l local) locked(f func() error) error {
	if err := os.MkdirAll(l.state, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(l.state, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = lock.Close() }() // closing releases the lock
	for deadline := time.Now().Add(lockTimeout); ; time.Sleep(200 * time.Millisecond) {
		err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return fmt.Errorf("another local-operator holds %s: %w", lock.Name(), err)
		}
	}
	return f()
}

// prepare applies config/local and writes the ServiceAccount's kubeconfig.
func (l local) prepare(ctx context.Context) error {
	if err := devkit.RequireFiles("KUSTOMIZE", "KUBECTL"); err != nil {
		return err
	}
	if _, err := os.Stat(l.clusterKubeconfig); err != nil {
		return fmt.Errorf("no cluster kubeconfig at %s (start the cluster: make cluster-up)", l.clusterKubeconfig)
	}
	return devkit.LocalOperator{
		Kustomize: os.Getenv("KUSTOMIZE"), Kubectl: os.Getenv("KUBECTL"), RepoRoot: l.repo,
		AdminKubeconfig: l.clusterKubeconfig, Log: os.Stderr,
	}.Prepare(ctx, l.kubeconfig(), tokenTTL)
}

// start prepares, starts the manager unless it runs, and waits until it is ready.
func (l local) start(ctx context.Context) error {
	started := time.Now()
	if err := devkit.RequireFiles("MANAGER"); err != nil {
		return err
	}
	if err := l.prepare(ctx); err != nil {
		return err
	}
	if pid, ok := l.daemons.PID(name); ok {
		logf("manager already running (pid %d)", pid)
		warnIfStale(pid, os.Getenv("MANAGER"))
	} else if err := l.startManager(); err != nil {
		return err
	}
	data, err := os.ReadFile(l.probeAddrFile())
	if err != nil {
		return err
	}
	readyz := "http://" + strings.TrimSpace(string(data)) + "/readyz"
	for deadline := time.Now().Add(readyTimeout); devkit.CheckReady(ctx, readyz, 2*time.Second) != nil; time.Sleep(300 * time.Millisecond) {
		if _, ok := l.daemons.PID(name); !ok {
			return fmt.Errorf("the manager exited; last lines of %s:\n%s", l.daemons.LogFile(name), devkit.LogTail(l.daemons.LogFile(name), 20))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the manager was not ready at %s within %v; last lines of %s:\n%s", readyz, readyTimeout,
				l.daemons.LogFile(name), devkit.LogTail(l.daemons.LogFile(name), 20))
		}
	}
	logf("manager ready at %s (start took %ds)", readyz, int(time.Since(started).Seconds()))
	fmt.Println(l.daemons.LogFile(name))
	return nil
}

// startManager starts the manager as a daemon, its probes on a free loopback port.
func (l local) startManager() error {
	port, err := devkit.FreePort()
	if err != nil {
		return err
	}
	probeAddr := "127.0.0.1:" + strconv.Itoa(port)
	if err := os.WriteFile(l.probeAddrFile(), []byte(probeAddr+"\n"), 0o644); err != nil {
		return err
	}
	args := devkit.ManagerFlags{
		Kubeconfig: l.kubeconfig(), MetricsAddr: "0", ProbeAddr: probeAddr, LeaderElect: true,
		Extra: strings.Fields(os.Getenv("OAAT_OPERATOR_ARGS")),
	}.Args()
	pid, err := l.daemons.Start(name, os.Getenv("MANAGER"), args...)
	if err != nil {
		return err
	}
	logf("started %s (pid %d, log %s)", name, pid, l.daemons.LogFile(name))
	return nil
}

// warnIfStale warns when the running manager is not the binary MANAGER names now (a manager
// started before MANAGER was rebuilt keeps running the old build).
func warnIfStale(pid int, manager string) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return
	}
	want, err := filepath.EvalSymlinks(manager)
	if err != nil {
		return
	}
	switch exe {
	case want:
	case want + " (deleted)":
		logf("warning: the running manager (pid %d) is an older build of %s; stop and start it to run the new one", pid, want)
	default:
		logf("warning: the running manager (pid %d) runs %s, not %s", pid, exe, want)
	}
}

// stop stops the manager, then with purge deletes the state directory.
func (l local) stop(purge bool) error {
	if _, err := os.Stat(l.state); err == nil {
		err := l.locked(func() error {
			pid, killed, err := l.daemons.Stop(name, stopTimeout)
			switch {
			case err != nil:
				return err
			case killed:
				logf("stopped %s (pid %d) with SIGKILL, still running %v after SIGTERM", name, pid, stopTimeout)
			case pid != 0:
				logf("stopped %s (pid %d)", name, pid)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if purge {
		if err := os.RemoveAll(l.state); err != nil {
			return err
		}
		logf("removed %s", l.state)
	}
	return nil
}

// status prints whether the manager runs; 0 if it does, 1 if not.
func (l local) status() int {
	if pid, ok := l.daemons.PID(name); ok {
		fmt.Printf("%-24s pid %-8d running\nlog: %s\nkubeconfig: %s\n", name, pid, l.daemons.LogFile(name), l.kubeconfig())
		return 0
	}
	fmt.Printf("%-24s pid %-8s stopped\n", name, "-")
	return 1
}
