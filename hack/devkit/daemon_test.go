package devkit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A daemon is started in its own session with its pid recorded, found by PID while it runs, and
// stopped with SIGTERM; one that ignores SIGTERM is killed after the grace period.
func TestDaemonsStartFindStop(t *testing.T) {
	d := Daemons{StateDir: t.TempDir()}
	// The daemon's command line must keep naming the state directory: tail -f of a file there.
	marker := filepath.Join(d.StateDir, "marker")
	if err := os.WriteFile(marker, []byte("tailed line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pid, err := d.Start("sleeper", "/usr/bin/tail", "-f", marker)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = d.Stop("sleeper", time.Second) })
	if got, ok := d.PID("sleeper"); !ok || got != pid {
		t.Fatalf("PID = %d, %v; want %d, true", got, ok, pid)
	}
	if sid, err := sessionOf(pid); err != nil || sid != pid {
		t.Errorf("session of the daemon = %d (%v), want its own (%d)", sid, err, pid)
	}
	waitFor(t, "the daemon's output", func() bool {
		data, _ := os.ReadFile(d.LogFile("sleeper"))
		return strings.Contains(string(data), "==== ") && strings.Contains(string(data), "\ntailed line\n")
	})
	stopped, killed, err := d.Stop("sleeper", 5*time.Second)
	if err != nil || stopped != pid || killed {
		t.Fatalf("Stop = %d, %v, %v; want %d, false, nil", stopped, killed, err, pid)
	}
	if ProcessAlive(pid) {
		t.Error("the daemon still runs after Stop")
	}
	if _, err := os.Stat(d.PIDFile("sleeper")); !os.IsNotExist(err) {
		t.Errorf("the pid file is still there: %v", err)
	}
	if _, ok := d.PID("sleeper"); ok {
		t.Error("PID finds a stopped daemon")
	}

	pid, err = d.Start("stubborn", "/bin/sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.1; done`, marker)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the trap", func() bool {
		data, _ := os.ReadFile(d.LogFile("stubborn"))
		return strings.Contains(string(data), "\nready\n") // a line of its own: the start line names the script
	})
	if stopped, killed, err := d.Stop("stubborn", 300*time.Millisecond); err != nil || stopped != pid || !killed {
		t.Fatalf("Stop of a daemon that ignores SIGTERM = %d, %v, %v; want %d, true, nil", stopped, killed, err, pid)
	}
}

// A recorded pid whose process does not name the state directory (a pid recycled by another
// program) is not ours: PID does not find it and Stop neither signals it nor fails.
func TestDaemonsIgnoreRecycledPID(t *testing.T) {
	d := Daemons{StateDir: t.TempDir()}
	other := startSh(t, "exec sleep 60", filepath.Join(t.TempDir(), "other.log"))
	if err := os.MkdirAll(filepath.Dir(d.PIDFile("x")), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.PIDFile("x"), []byte(strconv.Itoa(other.PID())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.PID("x"); ok {
		t.Error("PID takes another program's process for the daemon")
	}
	if stopped, _, err := d.Stop("x", time.Second); err != nil || stopped != 0 {
		t.Errorf("Stop = %d, %v; want 0, nil", stopped, err)
	}
	if !ProcessAlive(other.PID()) {
		t.Error("Stop signalled another program's process")
	}
}

// A command line that names nothing under the state directory could never be found again: Start
// refuses it, as it refuses a relative state directory.
func TestDaemonsStartRefusesUnrecognisable(t *testing.T) {
	d := Daemons{StateDir: t.TempDir()}
	if _, err := d.Start("x", "/bin/sleep", "60"); err == nil || !strings.Contains(err.Error(), "no path under") {
		t.Errorf("Start without a state path = %v, want a refusal", err)
	}
	if _, err := (Daemons{StateDir: "relative"}).Start("x", "/bin/sh", "-c", "true", "relative/x"); err == nil {
		t.Error("Start with a relative state directory succeeded")
	}
}

// sessionOf reads the session id of pid from /proc/PID/stat (the sixth field; the command name,
// the second, is in parentheses and may hold spaces).
func sessionOf(pid int) (int, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return strconv.Atoi(fields[3])
}
