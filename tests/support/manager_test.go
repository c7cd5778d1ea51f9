package support

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeManagerEnv makes this test binary play the manager (see TestMain): it prints its arguments
// and WATCH_NAMESPACE, then serves /readyz on its probe address, or exits 3 when the variable
// says "exit".
const fakeManagerEnv = "SUPPORT_FAKE_MANAGER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeManagerEnv); mode != "" {
		fakeManager(mode, os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

func fakeManager(mode string, args []string) {
	fmt.Println("args:", strings.Join(args, " "))
	fmt.Println("WATCH_NAMESPACE:", os.Getenv("WATCH_NAMESPACE"))
	if mode == "exit" {
		os.Exit(3)
	}
	var probe string
	for i, a := range args {
		if a == "--health-probe-bind-address" && i+1 < len(args) {
			probe = args[i+1]
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	server := &http.Server{Addr: probe, Handler: mux, ReadHeaderTimeout: time.Second}
	fmt.Println(server.ListenAndServe())
	os.Exit(1)
}

// newFakeManager returns a Manager whose binary is this test binary playing the manager in mode.
func newFakeManager(t *testing.T, mode string) *Manager {
	t.Helper()
	m := &Manager{
		Name: "fake", Binary: os.Args[0], Kubeconfig: "/nonexistent/kubeconfig",
		LogPath: filepath.Join(t.TempDir(), "manager.log"), Env: []string{fakeManagerEnv + "=" + mode},
	}
	t.Cleanup(func() { _ = m.Kill() })
	return m
}

func TestManagerRestart(t *testing.T) {
	ctx := context.Background()
	m := newFakeManager(t, "serve")
	m.LeaseNamespace, m.Metrics = "lease-ns", MetricsHTTP
	m.Args, m.Env = []string{"--zap-log-level=debug"}, append(m.Env, "WATCH_NAMESPACE=watched")
	if m.Running() || m.PID() != 0 || m.UnexpectedExit() != nil || m.MetricsAddr() != "" {
		t.Fatal("a manager never started: not running, no pid, no exit, no metrics address")
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	if err := m.WaitReady(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	metrics := m.MetricsAddr()
	out, err := m.LogSinceStart()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"args: --kubeconfig /nonexistent/kubeconfig --health-probe-bind-address 127.0.0.1:",
		" --metrics-bind-address " + metrics + " --metrics-secure=false --leader-elect --leader-election-namespace lease-ns --zap-log-level=debug\n",
		"WATCH_NAMESPACE: watched\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the manager's log lacks %q:\n%s", want, out)
		}
	}
	if err := m.Start(); err == nil || !strings.Contains(err.Error(), "already runs") {
		t.Errorf("Start while it runs: %v, want already runs", err)
	}
	firstPID := m.PID()
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if m.Running() || m.UnexpectedExit() != nil {
		t.Errorf("after Kill: running %v, unexpected exit %v", m.Running(), m.UnexpectedExit())
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	if err := m.WaitReady(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if m.PID() == firstPID || m.MetricsAddr() != metrics {
		t.Errorf("after a restart: pid %d (was %d), metrics %s (was %s): want a new process on the same metrics address",
			m.PID(), firstPID, m.MetricsAddr(), metrics)
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if m.Running() || m.UnexpectedExit() != nil {
		t.Errorf("after Stop: running %v, unexpected exit %v", m.Running(), m.UnexpectedExit())
	}
}

func TestManagerMetricsOff(t *testing.T) {
	m := newFakeManager(t, "serve")
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	if err := m.WaitReady(context.Background(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	out, _ := m.LogSinceStart()
	if !strings.Contains(out, " --metrics-bind-address 0\n") || strings.Contains(out, "--leader-elect") || m.MetricsAddr() != "" {
		t.Errorf("metrics off, no lease: log\n%s\nmetrics address %q", out, m.MetricsAddr())
	}
}

func TestManagerExitsWhileStarting(t *testing.T) {
	m := newFakeManager(t, "exit")
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	err := m.WaitReady(context.Background(), 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "fake not ready") {
		t.Errorf("WaitReady of a manager that exits: %v", err)
	}
	if m.UnexpectedExit() == nil {
		t.Error("UnexpectedExit: nil for a manager that exited on its own")
	}
}

func TestNilManager(t *testing.T) {
	var m *Manager
	if m.UnexpectedExit() != nil || m.Running() || m.PID() != 0 || m.Process() != nil {
		t.Error("a nil Manager: no exit, not running, no pid, no process")
	}
}
