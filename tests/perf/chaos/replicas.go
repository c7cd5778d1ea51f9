package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// leaseName is the operator's leader election Lease (cmd/main.go's LeaderElectionID).
const leaseName = "oaat-operator.oaat.io"

// replicas are the operator's replicas, started again after they exit, as a Deployment's would
// be: after restartDelay when the chaos run killed one; when one exited by itself (it lost its
// Lease, or could not reach the API server while it was down), after a delay that doubles with
// each exit in a row, from restartDelay to 30 s, as a kubelet's crash-loop back-off does.
type replicas struct {
	all          []*perfkit.Manager
	restartDelay time.Duration
	log          func(format string, args ...any)

	mu        sync.Mutex
	downSince map[*perfkit.Manager]time.Time // when it was killed or seen exited
	backoff   map[*perfkit.Manager]time.Duration
	kills     int
	selfExits map[string]int // first line of the reason → count
	starts    int
	paused    map[*perfkit.Manager]int // SIGSTOPped replicas → their pid
}

// maxBackoff bounds the delay before a replica that keeps exiting is started again.
const maxBackoff = 30 * time.Second

// installation is how the replicas of one installation of the operator run: their names, the
// namespaces they watch and where their leader election Lease is.
type installation struct {
	// prefix names the replicas, prefix-0 to prefix-<n-1>.
	prefix string
	// watch is WATCH_NAMESPACE, the namespaces the replicas watch; empty: all.
	watch string
	// leaseNamespace holds the installation's Lease; empty: devkit.OperatorNamespace.
	leaseNamespace string
}

// newReplicas makes n replicas of the installation, each talking to the API server through its
// own listener of proxy, or directly when proxy is nil.
func newReplicas(env *perfkit.Env, proxy *apiProxy, inst installation, n int, restartDelay time.Duration, log func(string, ...any)) (*replicas, error) {
	r := &replicas{
		restartDelay: restartDelay, log: log, selfExits: map[string]int{},
		downSince: map[*perfkit.Manager]time.Time{}, backoff: map[*perfkit.Manager]time.Duration{},
		paused: map[*perfkit.Manager]int{},
	}
	for i := range n {
		m := perfkit.NewManager(env, fmt.Sprintf("%s-%d", inst.prefix, i), true)
		m.LeaseNamespace = inst.leaseNamespace
		if inst.watch != "" {
			m.Env = append(m.Env, "WATCH_NAMESPACE="+inst.watch)
		}
		if err := os.Remove(m.LogPath); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if proxy != nil {
			kubeconfig, err := proxy.listen(m.Name, env.OperatorKubeconfig, filepath.Dir(env.OperatorKubeconfig))
			if err != nil {
				return nil, err
			}
			m.Kubeconfig = kubeconfig
		}
		r.all = append(r.all, m)
	}
	return r, nil
}

// lifecycle returns how many times the replicas were started, how many times they exited on
// their own, and those exits by reason.
func (r *replicas) lifecycle() (starts, exits int, reasons map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.selfExits {
		exits += n
	}
	return r.starts, exits, maps.Clone(r.selfExits)
}

// supervise starts the replicas and keeps them running until ctx ends, then stops them.
func (r *replicas) supervise(ctx context.Context) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		r.mu.Lock()
		for _, m := range r.all {
			r.keepRunning(m)
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			r.mu.Lock()
			for m := range r.paused {
				_ = syscall.Kill(r.paused[m], syscall.SIGCONT) // else it cannot handle SIGTERM
				delete(r.paused, m)
			}
			r.mu.Unlock()
			for _, m := range r.all {
				if err := m.Stop(); err != nil {
					r.log("stopping %s: %v", m.Name, err)
				}
			}
			return
		case <-tick.C:
		}
	}
}

// keepRunning starts m if it is not running and its delay has passed; r.mu is held.
func (r *replicas) keepRunning(m *perfkit.Manager) {
	if m.Running() {
		if time.Since(m.StartedAt()) > maxBackoff {
			delete(r.backoff, m) // it has run long enough: the next exit starts a new series
		}
		return
	}
	if m.PID() != 0 {
		if _, ok := r.downSince[m]; !ok {
			// It exited by itself; a killed one has its entry already.
			r.selfExits[exitReason(m)]++
			r.backoff[m] = min(max(2*r.backoff[m], r.restartDelay), maxBackoff)
			r.downSince[m] = time.Now()
			r.log("%s exited by itself; starting it again in %s", m.Name, r.backoff[m])
		}
		delay := r.restartDelay
		if b, ok := r.backoff[m]; ok {
			delay = b
		}
		if time.Since(r.downSince[m]) < delay {
			return
		}
	}
	delete(r.downSince, m)
	if err := m.Start(); err != nil {
		r.log("starting %s: %v", m.Name, err)
		return
	}
	r.starts++
}

// leader returns the replica whose metrics say it leads, nil when none does (a failover). A
// paused replica is not asked: it cannot answer, and cannot act.
func (r *replicas) leader(ctx context.Context) *perfkit.Manager {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.all {
		if _, paused := r.paused[m]; !m.Running() || paused {
			continue
		}
		samples, err := m.Metrics(ctx)
		if err == nil && samples.Sum("leader_election_master_status", map[string]string{"name": leaseName}) == 1 {
			return m
		}
	}
	return nil
}

// kill sends SIGKILL to m; it is started again after the restart delay.
func (r *replicas) kill(m *perfkit.Manager) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := m.Kill(); err != nil {
		return err
	}
	r.downSince[m] = time.Now()
	r.kills++
	return nil
}

// waitLeader waits until a replica leads, and returns it.
func (r *replicas) waitLeader(ctx context.Context, timeout time.Duration) (*perfkit.Manager, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if m := r.leader(ctx); m != nil {
			return m, nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil, fmt.Errorf("no replica leads after %s", timeout)
}

// exitReason is how the replica's last process exited and the last line of its log, which
// says why.
func exitReason(m *perfkit.Manager) string {
	err := m.UnexpectedExit()
	if err == nil {
		return "exited"
	}
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	status := lines[0]
	if i, j := strings.Index(status, ") "), strings.Index(status, ";"); i >= 0 && j > i {
		status = status[i+2 : j]
	}
	last := lines[len(lines)-1]
	if len(last) > 160 {
		last = last[:160] + "..."
	}
	return status + ": " + last
}
