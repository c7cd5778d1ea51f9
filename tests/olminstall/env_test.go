//go:build olminstall

package olminstall

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// envVars name what the suite runs and reads: the binaries cluster.sh starts (the Makefile's
// CLUSTER_ENV), OLM's two operators, opm, the manager, and the directories that hold OLM's CRDs and
// the Prometheus Operator's.
var envVars = []string{
	"KUBE_APISERVER", "KUBE_CONTROLLER_MANAGER", "KUBE_SCHEDULER", "KUBECTL", "ETCD", "KWOK",
	"OLM", "CATALOG_OPERATOR", "OPM", "MANAGER", "OLM_CRDS_DIR", "MONITORING_CRDS_DIR",
}

// testEnv holds the paths the suite uses.
type testEnv struct {
	repoRoot        string
	kubectl         string
	olm             string
	catalogOperator string
	opm             string
	manager         string
	// olmCRDs is the crds directory of github.com/operator-framework/api (the version OLM is built
	// with); monitoringCRDs the example/prometheus-operator-crd directory of the Prometheus
	// Operator's module.
	olmCRDs        string
	monitoringCRDs string
	// bundle is the bundle directory: <repo>/bundle, or OLM_INSTALL_BUNDLE_DIR if set (to check
	// that the suite catches a broken bundle, for instance a CSV that lacks a permission).
	bundle string
}

// loadEnv reads the paths from the environment and fails, saying how to run the suite, when one
// is missing: the suite must never pass, or skip, by testing nothing.
func loadEnv() (testEnv, error) {
	var problems []string
	for _, v := range envVars {
		path := os.Getenv(v)
		if path == "" {
			problems = append(problems, v+" is not set")
			continue
		}
		if _, err := os.Stat(path); err != nil {
			problems = append(problems, fmt.Sprintf("%s=%s: %v", v, path, err))
		}
	}
	if len(problems) > 0 {
		return testEnv{}, fmt.Errorf("%s. The OLM install test needs the local cluster's binaries, olm, catalog, opm, "+
			"bin/manager and the CRD directories: run it with `make test-olm-install`, which builds them and sets %s",
			strings.Join(problems, "; "), strings.Join(envVars, ", "))
	}
	// go test runs in the package's directory, tests/olminstall.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return testEnv{}, err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return testEnv{}, fmt.Errorf("repository root not found from the working directory: %w", err)
	}
	return testEnv{
		repoRoot:        root,
		kubectl:         os.Getenv("KUBECTL"),
		olm:             os.Getenv("OLM"),
		catalogOperator: os.Getenv("CATALOG_OPERATOR"),
		opm:             os.Getenv("OPM"),
		manager:         os.Getenv("MANAGER"),
		olmCRDs:         os.Getenv("OLM_CRDS_DIR"),
		monitoringCRDs:  os.Getenv("MONITORING_CRDS_DIR"),
		bundle:          cmp.Or(os.Getenv("OLM_INSTALL_BUNDLE_DIR"), filepath.Join(root, "bundle")),
	}, nil
}

// ---------------------------------------------------------------------------------------------
// The local cluster

// localCluster is the suite's own instance of hack/cluster/cluster.sh, in a state directory that
// no one else uses.
type localCluster struct {
	script   string
	stateDir string
}

// run runs cluster.sh with the arguments and returns its standard output; its standard error
// (progress) goes to the Ginkgo writer.
func (c *localCluster) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.script, args...)
	cmd.Env = append(os.Environ(), "OAAT_CLUSTER_DIR="+c.stateDir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(&stderr, GinkgoWriter)
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("cluster.sh %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// up starts the cluster and returns the path of its admin kubeconfig.
func (c *localCluster) up(ctx context.Context) (string, error) {
	out, err := c.run(ctx, "up")
	if err != nil {
		return "", err
	}
	fields := strings.Fields(out)
	if len(fields) == 0 {
		return "", errors.New("cluster.sh up printed no kubeconfig path")
	}
	return fields[len(fields)-1], nil
}

// purge stops whatever an earlier run left running and deletes its state: every run installs
// into an empty cluster, as a user's first install would (no CRD, ClusterRole or namespace of an
// earlier run that would let a check pass without this run's install having made it).
func (c *localCluster) purge(ctx context.Context) error {
	_, err := c.run(ctx, "down", "--purge")
	return err
}

// down stops the cluster and keeps its state (logs, etcd data) for a look after the run. It is
// not bound to the spec's context: it must run even after the suite timed out.
func (c *localCluster) down() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := c.run(ctx, "down")
	return err
}

// pids returns the recorded pid of each component.
func (c *localCluster) pids() map[string]int {
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(c.stateDir, "pids", "*.pid"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return pids
}

// ---------------------------------------------------------------------------------------------
// Processes the suite starts itself: olm, catalog, opm serve, the manager.

// process is a program run by the suite, with its output appended to a log file.
type process struct {
	name    string
	logPath string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{} // closed once the process has exited and been reaped
	exitErr  error         // why it exited, once done is closed
	stopping bool          // the suite stopped it on purpose
	logStart int64         // size of the log when the process started
}

// startProcess starts binary with args and env (added to the suite's environment), its output
// appended to logPath.
func startProcess(name, logPath string, env []string, binary string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the process has its own descriptor
	info, err := logFile.Stat()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "\n==== %s starting %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), binary, strings.Join(args, " "))
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so that a Ctrl-C in the terminal reaches the suite, which stops it in
	// order; and killed with the suite should the suite die without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{}), logStart: info.Size()}
	go func() {
		err := cmd.Wait()
		if err == nil {
			err = errors.New("exited with status 0")
		}
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	GinkgoWriter.Printf("Started %s, pid %d, log %s\n", name, cmd.Process.Pid, logPath)
	started.add(p)
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// reaped reports whether the process has exited and been reaped.
func (p *process) reaped() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// unexpectedExit returns why the process exited if it did so on its own.
func (p *process) unexpectedExit() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return nil
	}
	select {
	case <-p.done:
		return fmt.Errorf("%s (pid %d) %w; last lines of %s:\n%s", p.name, p.pid(), p.exitErr, p.logPath, logTail(p.logPath, 30))
	default:
		return nil
	}
}

// stop sends SIGTERM, then SIGKILL if the process still runs after grace; it returns once the
// process has been reaped, or an error if even SIGKILL did not end it.
func (p *process) stop(grace time.Duration) error {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("sending SIGTERM to %s (pid %d): %w", p.name, p.pid(), err)
	}
	select {
	case <-p.done:
		GinkgoWriter.Printf("Stopped %s (pid %d) with SIGTERM\n", p.name, p.pid())
		return nil
	case <-time.After(grace):
	}
	GinkgoWriter.Printf("%s (pid %d) still runs %s after SIGTERM: sending SIGKILL\n", p.name, p.pid(), grace)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("sending SIGKILL to %s (pid %d): %w", p.name, p.pid(), err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL", p.name, p.pid())
	}
}

// logSinceStart returns what the process has logged since it started.
func (p *process) logSinceStart() (string, error) {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return "", err
	}
	if int64(len(data)) < p.logStart {
		return "", nil
	}
	return string(data[p.logStart:]), nil
}

// processList is every process the suite started, in order, so that the teardown stops them all
// (the last started first) and checks that none is left.
type processList struct {
	mu    sync.Mutex
	procs []*process
}

var started processList

func (l *processList) add(p *process) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.procs = append(l.procs, p)
}

func (l *processList) all() []*process {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*process(nil), l.procs...)
}

// ---------------------------------------------------------------------------------------------
// Small helpers

// freePort returns a TCP port that nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// processAlive reports whether the process exists and is not a zombie (a zombie has exited and
// only waits to be reaped).
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may hold spaces.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// processesUsing lists the live processes, other than this one, whose command line or environment
// names a path under dir: every process of the run does (the cluster's components their state
// files, olm and catalog their KUBECONFIG, opm its catalog, the manager its kubeconfig).
func processesUsing(dir string) []string {
	needle := []byte(strings.TrimSuffix(dir, "/") + "/")
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !processAlive(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if bytes.Contains(cmdline, needle) || bytes.Contains(environ, needle) {
			found = append(found, fmt.Sprintf("pid %d: %s", pid, strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))))
		}
	}
	sort.Strings(found)
	return found
}

// logTail returns the last n lines of a file.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// runCommand runs a program and returns its standard output; the error carries its standard error.
func runCommand(ctx context.Context, dir string, stdin io.Reader, binary string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(binary), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}
