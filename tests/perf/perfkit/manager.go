package perfkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// Manager is bin/manager run as the operator's ServiceAccount (support.Manager) by the perf
// programs, its metrics served over plain HTTP on the loopback address so that they can read them.
type Manager struct {
	*support.Manager
}

// NewManager returns a replica of the operator in env named name, not started; with leaderElect
// its Lease is in support.OperatorNamespace.
func NewManager(env *Env, name string, leaderElect bool) *Manager {
	m := &support.Manager{
		Name: name, Binary: os.Getenv("MANAGER"), Kubeconfig: env.OperatorKubeconfig,
		LogPath: env.ManagerLog(name), Metrics: support.MetricsHTTP, Log: env.Log,
	}
	if leaderElect {
		m.LeaseNamespace = support.OperatorNamespace
	}
	return &Manager{Manager: m}
}

// Metrics scrapes the current process's /metrics.
func (m *Manager) Metrics(ctx context.Context) (Samples, error) {
	if !m.Running() {
		return nil, errors.New(m.Name + " does not run")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.MetricsAddr()+"/metrics", http.NoBody)
	if err != nil {
		return nil, err
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s /metrics: %s", m.Name, resp.Status)
	}
	return ParseMetrics(resp.Body)
}

// Usage reads the current process's resource usage.
func (m *Manager) Usage() (Usage, error) { return ReadUsage(m.PID()) }
