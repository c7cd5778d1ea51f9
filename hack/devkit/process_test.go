package devkit

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func startSh(t *testing.T, script, logPath string) *Process {
	t.Helper()
	p, err := StartProcess(ProcessSpec{
		Name: "sh", Binary: "/bin/sh", Args: []string{"-c", script}, Env: []string{"SUPPORT_TEST=yes"}, LogPath: logPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Signal(syscall.SIGKILL, 10*time.Second) })
	return p
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcessStop(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "p.log")
	if err := os.WriteFile(logPath, []byte("earlier run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	p, err := StartProcess(ProcessSpec{Name: "sleeper", Binary: "/bin/sh", Args: []string{"-c", `echo "env $SUPPORT_TEST"; exec sleep 60`},
		Env: []string{"SUPPORT_TEST=yes"}, LogPath: logPath, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !ProcessAlive(p.PID()) || p.Reaped() {
		t.Fatal("the process does not run")
	}
	waitFor(t, "the output", func() bool { out, _ := p.LogSinceStart(); return strings.Contains(out, "env yes") })
	out, _ := p.LogSinceStart()
	if strings.Contains(out, "earlier run") || !strings.Contains(out, "==== ") {
		t.Errorf("LogSinceStart = %q, want the start line and this run's output only", out)
	}
	if err := p.UnexpectedExit(5); err != nil {
		t.Errorf("UnexpectedExit of a running process: %v", err)
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.Reaped() || ProcessAlive(p.PID()) {
		t.Error("the process runs after Stop")
	}
	if err := p.UnexpectedExit(5); err != nil {
		t.Errorf("UnexpectedExit after Stop: %v", err)
	}
	if !strings.Contains(log.String(), "Started sleeper") || !strings.Contains(log.String(), "with terminated") {
		t.Errorf("log = %q", log.String())
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestProcessStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	p := startSh(t, `trap "" TERM; echo "trap set"; while :; do sleep 0.05; done`, filepath.Join(t.TempDir(), "p.log"))
	waitFor(t, "the trap", func() bool { out, _ := p.LogSinceStart(); return strings.Contains(out, "trap set\n") })
	if err := p.Signal(syscall.SIGTERM, 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "still runs") {
		t.Errorf("Signal(SIGTERM) = %v, want that it still runs", err)
	}
	if err := p.Stop(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !p.Reaped() {
		t.Error("not reaped after Stop")
	}
}

func TestProcessUnexpectedExit(t *testing.T) {
	p := startSh(t, `for i in 1 2 3 4; do echo line $i; done; exit 7`, filepath.Join(t.TempDir(), "p.log"))
	waitFor(t, "the exit", p.Reaped)
	err := p.UnexpectedExit(2)
	if err == nil {
		t.Fatal("UnexpectedExit of a process that exited: nil")
	}
	for _, want := range []string{fmt.Sprintf("sh (pid %d)", p.PID()), "exit status 7", "line 3\nline 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("UnexpectedExit = %q, want %q in it", err, want)
		}
	}
	if strings.Contains(err.Error(), "line 2") {
		t.Errorf("UnexpectedExit = %q, want the last 2 lines only", err)
	}
	var nilProc *Process
	if err := nilProc.UnexpectedExit(2); err != nil {
		t.Errorf("UnexpectedExit of nil: %v", err)
	}
}

func TestStartProcessFails(t *testing.T) {
	dir := t.TempDir()
	if _, err := StartProcess(ProcessSpec{Name: "x", Binary: filepath.Join(dir, "missing"), LogPath: filepath.Join(dir, "x.log")}); err == nil {
		t.Error("StartProcess of a missing binary: no error")
	}
	if _, err := StartProcess(ProcessSpec{Name: "x", Binary: "/bin/true", LogPath: filepath.Join(dir, "no", "x.log")}); err == nil {
		t.Error("StartProcess with an unwritable log: no error")
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("listening on the free port %d: %v", port, err)
	}
	l.Close()
}

func TestProcessAliveAndUsing(t *testing.T) {
	if !ProcessAlive(os.Getpid()) {
		t.Error("ProcessAlive(self) = false")
	}
	dir := t.TempDir()
	// Named in its environment only.
	p, err := StartProcess(ProcessSpec{Name: "sleep", Binary: "/bin/sh", Args: []string{"-c", "exec sleep 60"},
		Env: []string{"MARKER=" + dir + "/marker"}, LogPath: filepath.Join(t.TempDir(), "p.log")})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("pid %d: sleep 60", p.PID())
	waitFor(t, "ProcessesUsing to list the process", func() bool {
		got := ProcessesUsing(dir)
		return len(got) == 1 && got[0] == want
	})
	if err := p.Signal(syscall.SIGKILL, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if ProcessAlive(p.PID()) {
		t.Error("ProcessAlive of a reaped process = true")
	}
	if got := ProcessesUsing(dir); len(got) != 0 {
		t.Errorf("ProcessesUsing after the kill = %v", got)
	}
}

func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{1: "c", 2: "b\nc", 5: "a\nb\nc"} {
		if got := LogTail(path, n); got != want {
			t.Errorf("LogTail(%d) = %q, want %q", n, got, want)
		}
	}
	if got := LogTail(path+".missing", 3); !strings.HasPrefix(got, "(cannot read ") {
		t.Errorf("LogTail of a missing file = %q", got)
	}
}
