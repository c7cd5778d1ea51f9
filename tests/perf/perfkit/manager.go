package perfkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

// Manager is bin/manager run as a separate process with the operator's ServiceAccount token, its
// metrics served over plain HTTP on the loopback address so that the programs can read them. It
// can be killed and started again; each start is a new process that appends to the same log.
type Manager struct {
	// Name names the replica in messages and in its log file.
	Name string
	// Binary, Kubeconfig and LogPath are the manager binary, the operator's kubeconfig and the
	// log its output is appended to.
	Binary, Kubeconfig, LogPath string
	// LeaderElect runs the manager with --leader-elect, its Lease in LeaseNamespace.
	LeaderElect bool
	// LeaseNamespace is the namespace of the leader election Lease, devkit.OperatorNamespace
	// when empty; another installation of the operator has its own, where the ServiceAccount
	// must be granted its Lease.
	LeaseNamespace string
	// Env is added to the process's environment, e.g. WATCH_NAMESPACE to limit the namespaces it
	// watches.
	Env []string
	// Log receives what happens to the process.
	Log io.Writer

	proc        *devkit.Process
	metricsAddr string
	probeAddr   string
	pprofAddr   string
	startedAt   time.Time
}

// NewManager returns a replica of the operator in env named name, not started. Its Go runtime
// has no memory limit unless MANAGER_GOMEMLIMIT gives it one (GOMEMLIMIT, as the Deployment of
// config/manager sets it), so that the memory figures are the manager's own by default.
func NewManager(env *Env, name string, leaderElect bool) *Manager {
	m := &Manager{
		Name: name, Binary: os.Getenv("MANAGER"), Kubeconfig: env.OperatorKubeconfig,
		LogPath: env.ManagerLog(name), LeaderElect: leaderElect, Log: env.Log,
	}
	if limit := os.Getenv("MANAGER_GOMEMLIMIT"); limit != "" {
		m.Env = []string{"GOMEMLIMIT=" + limit}
	}
	return m
}

// Start starts a new process of the manager; the previous one must have ended.
func (m *Manager) Start() error {
	if m.proc != nil && !m.proc.Reaped() {
		return fmt.Errorf("%s already runs (pid %d)", m.Name, m.proc.PID())
	}
	var ports [3]int
	for i := range ports {
		port, err := devkit.FreePort()
		if err != nil {
			return err
		}
		ports[i] = port
	}
	m.metricsAddr = "127.0.0.1:" + strconv.Itoa(ports[0])
	m.probeAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
	m.pprofAddr = "127.0.0.1:" + strconv.Itoa(ports[2])
	proc, err := devkit.StartProcess(devkit.ProcessSpec{
		Name: m.Name, Binary: m.Binary, Args: m.args(), Env: m.Env, LogPath: m.LogPath, Log: m.Log,
	})
	if err != nil {
		return err
	}
	m.proc, m.startedAt = proc, time.Now()
	return nil
}

// args are the process's command-line flags, with the addresses of the current start.
func (m *Manager) args() []string {
	flags := devkit.ManagerFlags{
		Kubeconfig: m.Kubeconfig, MetricsAddr: m.metricsAddr, MetricsInsecure: true, ProbeAddr: m.probeAddr,
		LeaderElect: m.LeaderElect, Extra: []string{"--pprof-bind-address", m.pprofAddr},
	}
	if m.LeaderElect && m.LeaseNamespace != "" {
		flags.LeaderElect = false
		flags.Extra = append(flags.Extra, "--leader-elect", "--leader-election-namespace", m.LeaseNamespace)
	}
	return flags.Args()
}

// StartedAt is when the current process was started.
func (m *Manager) StartedAt() time.Time { return m.startedAt }

// WaitReady waits until the manager's /readyz answers 200, failing early if it exits.
func (m *Manager) WaitReady(ctx context.Context, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := m.UnexpectedExit(); err != nil {
			return false, err
		}
		return devkit.CheckReady(ctx, "http://"+m.probeAddr+"/readyz", time.Second) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s not ready: %w; log %s", m.Name, err, m.LogPath)
	}
	return nil
}

// Running reports whether the current process runs.
func (m *Manager) Running() bool { return m.proc != nil && !m.proc.Reaped() }

// PID is the current process's pid, 0 before the first start.
func (m *Manager) PID() int {
	if m.proc == nil {
		return 0
	}
	return m.proc.PID()
}

// UnexpectedExit returns why the current process exited, if it did so on its own.
func (m *Manager) UnexpectedExit() error { return m.proc.UnexpectedExit(20) }

// Kill sends SIGKILL, as a node failure or an OOM kill would, and waits until it is reaped.
func (m *Manager) Kill() error {
	if m.proc == nil {
		return nil
	}
	return m.proc.Signal(syscall.SIGKILL, 10*time.Second)
}

// Stop stops the manager with SIGTERM (it then releases its Lease), SIGKILL after 30 s.
func (m *Manager) Stop() error {
	if m.proc == nil {
		return nil
	}
	return m.proc.Stop(30 * time.Second)
}

// Metrics scrapes the current process's /metrics.
func (m *Manager) Metrics(ctx context.Context) (Samples, error) {
	body, err := m.get(ctx, "http://"+m.metricsAddr+"/metrics")
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return ParseMetrics(body)
}

// HeapProfile writes the current process's heap profile, taken after a collection, to path.
func (m *Manager) HeapProfile(ctx context.Context, path string) error {
	body, err := m.get(ctx, "http://"+m.pprofAddr+"/debug/pprof/heap?gc=1")
	if err != nil {
		return err
	}
	defer body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// LiveHeap forces a collection in the current process and returns the bytes its heap holds then
// (runtime.MemStats.HeapAlloc, which /debug/pprof/heap?gc=1&debug=1 prints after the collection):
// what it keeps, whatever the collector's pacing (RSS and heap in use also hold the garbage of
// the last cycle).
func (m *Manager) LiveHeap(ctx context.Context) (int64, error) {
	body, err := m.get(ctx, "http://"+m.pprofAddr+"/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	defer body.Close()
	return heapAlloc(body)
}

// get asks the current process for url and returns the body of its 200 answer.
func (m *Manager) get(ctx context.Context, url string) (io.ReadCloser, error) {
	if !m.Running() {
		return nil, errors.New(m.Name + " does not run")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return nil, err
	}
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %s", m.Name, url, resp.Status)
	}
	return resp.Body, nil
}

// Usage reads the current process's resource usage.
func (m *Manager) Usage() (Usage, error) { return ReadUsage(m.PID()) }
