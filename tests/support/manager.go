package support

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// MetricsServing says how a Manager serves its metrics.
type MetricsServing int

const (
	// MetricsOff serves none (--metrics-bind-address 0).
	MetricsOff MetricsServing = iota
	// MetricsHTTPS serves them as the Deployment does: over HTTPS, with authentication and
	// authorization (--metrics-secure, the default).
	MetricsHTTPS
	// MetricsHTTP serves them over plain HTTP on the loopback address (--metrics-secure=false),
	// for programs that read them themselves.
	MetricsHTTP
)

// Manager is bin/manager run on this machine as a child process, with a kubeconfig of a
// ServiceAccount (LocalOperator.Prepare writes the operator's), as a Deployment would run it: the
// end-to-end suite, the OLM install test and the perf programs run it so. It can be killed and
// started again; each start is a new process that appends to the same log. Its metrics address is
// chosen at the first start and kept, so that a scrape target stays valid across restarts; the
// probe address is chosen anew at each start. Safe for concurrent use, once its fields are set.
type Manager struct {
	// Name names the process in messages.
	Name string
	// Binary, Kubeconfig and LogPath are the manager binary, the kubeconfig it runs with and the
	// log its output is appended to.
	Binary, Kubeconfig, LogPath string
	// LeaseNamespace, when set, runs the manager with --leader-elect and its Lease there.
	LeaseNamespace string
	// Metrics says how it serves its metrics.
	Metrics MetricsServing
	// Args are further arguments (--zap-log-level=debug); Env is added to the environment
	// (WATCH_NAMESPACE).
	Args, Env []string
	// Log receives what happens to the process; nil discards it.
	Log io.Writer

	mu          sync.Mutex
	proc        *Process // the current process, nil before the first start
	probeAddr   string
	metricsAddr string
	startedAt   time.Time
}

// Start starts a new process of the manager; the previous one must have ended.
func (m *Manager) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc != nil && !m.proc.Reaped() {
		return fmt.Errorf("%s already runs (pid %d)", m.Name, m.proc.PID())
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	probeAddr := "127.0.0.1:" + strconv.Itoa(port)
	if m.metricsAddr == "" && m.Metrics != MetricsOff {
		port, err := FreePort()
		if err != nil {
			return err
		}
		m.metricsAddr = "127.0.0.1:" + strconv.Itoa(port)
	}
	args := []string{"--kubeconfig", m.Kubeconfig, "--health-probe-bind-address", probeAddr}
	switch m.Metrics {
	case MetricsOff:
		args = append(args, "--metrics-bind-address", "0")
	case MetricsHTTPS:
		args = append(args, "--metrics-bind-address", m.metricsAddr)
	case MetricsHTTP:
		args = append(args, "--metrics-bind-address", m.metricsAddr, "--metrics-secure=false")
	}
	if m.LeaseNamespace != "" {
		args = append(args, "--leader-elect", "--leader-election-namespace", m.LeaseNamespace)
	}
	proc, err := StartProcess(ProcessSpec{
		Name: m.Name, Binary: m.Binary, Args: append(args, m.Args...), Env: m.Env, LogPath: m.LogPath, Log: m.Log,
	})
	if err != nil {
		return err
	}
	m.proc, m.probeAddr, m.startedAt = proc, probeAddr, time.Now()
	return nil
}

// current returns the current process (nil before the first start, or for a nil Manager) and
// its probe address.
func (m *Manager) current() (*Process, string) {
	if m == nil {
		return nil, ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc, m.probeAddr
}

// Process is the current process, nil before the first start.
func (m *Manager) Process() *Process {
	p, _ := m.current()
	return p
}

// Ready asks the current process's /readyz.
func (m *Manager) Ready(ctx context.Context) error {
	p, addr := m.current()
	if p == nil {
		return errors.New(m.Name + " was never started")
	}
	return CheckReady(ctx, "http://"+addr+"/readyz", time.Second)
}

// WaitReady waits until the current process's /readyz answers 200, failing early if it exits.
func (m *Manager) WaitReady(ctx context.Context, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := m.UnexpectedExit(); err != nil {
			return false, err
		}
		return m.Ready(ctx) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s not ready: %w; log %s", m.Name, err, m.LogPath)
	}
	return nil
}

// MetricsAddr is the host:port of the metrics endpoint, empty before the first start or when
// metrics are off.
func (m *Manager) MetricsAddr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.metricsAddr
}

// StartedAt is when the current process was started.
func (m *Manager) StartedAt() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startedAt
}

// Running reports whether the current process runs.
func (m *Manager) Running() bool {
	p := m.Process()
	return p != nil && !p.Reaped()
}

// PID is the current process's pid, 0 before the first start.
func (m *Manager) PID() int {
	if p := m.Process(); p != nil {
		return p.PID()
	}
	return 0
}

// UnexpectedExit returns why the current process exited, with the end of its log, if it did so
// on its own; nil while it runs, once it was stopped or killed, before the first start, or for a
// nil Manager.
func (m *Manager) UnexpectedExit() error { return m.Process().UnexpectedExit(40) }

// Kill sends SIGKILL, as a node failure or an OOM kill would, and waits until it is reaped.
func (m *Manager) Kill() error {
	if p := m.Process(); p != nil {
		return p.Signal(syscall.SIGKILL, killTimeout)
	}
	return nil
}

// Stop stops the manager with SIGTERM (it then releases its Lease), SIGKILL after 30 s.
func (m *Manager) Stop() error {
	if p := m.Process(); p != nil {
		return p.Stop(30 * time.Second)
	}
	return nil
}

// LogSinceStart returns what the current process has logged.
func (m *Manager) LogSinceStart() (string, error) {
	p := m.Process()
	if p == nil {
		return "", errors.New(m.Name + " was never started")
	}
	return p.LogSinceStart()
}
