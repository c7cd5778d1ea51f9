package devkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Daemons are processes that outlive the program that started them: the local cluster's
// components, which hack/cluster/cluster.sh starts through hack/processes (hack/lib/processes.sh),
// and the demo's manager, which hack/local-operator starts. Each daemon NAME has StateDir/pids/NAME.pid and
// StateDir/logs/NAME.log. A recorded pid counts only while that process is alive and its command
// line names a path under StateDir: a pid recycled by another program after ours died is never
// taken for ours, nor signalled. The children a Go program starts and stops itself are Process.
type Daemons struct {
	// StateDir is the state directory, an absolute path.
	StateDir string
}

// daemonPoll is how often Stop looks whether a signalled daemon is gone.
const daemonPoll = 100 * time.Millisecond

// PIDFile and LogFile are where the daemon name's pid and output are.
func (d Daemons) PIDFile(name string) string { return filepath.Join(d.StateDir, "pids", name+".pid") }

// LogFile is the file the daemon name's output is appended to.
func (d Daemons) LogFile(name string) string { return filepath.Join(d.StateDir, "logs", name+".log") }

// Start starts binary with args as the daemon name, in a session of its own (signals sent to the
// caller's process group do not reach it, and it outlives the caller), its output appended to
// LogFile(name), and records its pid. Some argument must name a path under StateDir, or the daemon
// would not be recognised as ours afterwards: Start refuses such a command line.
func (d Daemons) Start(name, binary string, args ...string) (int, error) {
	if !filepath.IsAbs(d.StateDir) {
		return 0, fmt.Errorf("state directory %q is not absolute", d.StateDir)
	}
	if !strings.Contains(strings.Join(append([]string{binary}, args...), " "), d.stateNeedle()) {
		return 0, fmt.Errorf("the command line of %s names no path under %s, so it could not be recognised as ours", name, d.StateDir)
	}
	for _, dir := range []string{filepath.Dir(d.PIDFile(name)), filepath.Dir(d.LogFile(name))} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
	}
	if err := os.Remove(d.PIDFile(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	cmd, _, err := startLogged(ProcessSpec{Name: name, Binary: binary, Args: args, LogPath: d.LogFile(name)},
		&syscall.SysProcAttr{Setsid: true})
	if err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	// Not waited for: the daemon outlives this process, and init reaps it.
	if err := cmd.Process.Release(); err != nil {
		return 0, err
	}
	// Start returns once the exec is done, but the kernel fills in the new command line a moment
	// later: wait for it, so that PID finds the daemon as soon as Start has returned.
	for deadline := time.Now().Add(killTimeout); !d.ours(pid) && ProcessAlive(pid) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	tmp := d.PIDFile(name) + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return 0, err
	}
	return pid, os.Rename(tmp, d.PIDFile(name))
}

// PID returns the recorded pid of the daemon name, and whether that process is ours and alive.
func (d Daemons) PID(name string) (int, bool) {
	data, err := os.ReadFile(d.PIDFile(name))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || !d.ours(pid) {
		return 0, false
	}
	return pid, true
}

// Stop ends the daemon name: SIGTERM, then SIGKILL if it still runs after grace. It returns the
// pid it stopped (0 if none ran) and whether SIGKILL was needed, once the process is gone; the
// pid file is removed in every case.
func (d Daemons) Stop(name string, grace time.Duration) (pid int, killed bool, err error) {
	pid, ok := d.PID(name)
	if ok {
		if killed, err = d.signalUntilGone(pid, grace); err != nil {
			return pid, killed, err
		}
	}
	if err := os.Remove(d.PIDFile(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return pid, killed, err
	}
	return pid, killed, nil
}

// signalUntilGone sends SIGTERM, then SIGKILL after grace, and waits until pid has exited. It
// waits for the process itself, not for its command line: an exiting process's command line is
// empty well before it has closed its files (and ports), so it would stop looking ours too early.
func (d Daemons) signalUntilGone(pid int, grace time.Duration) (killed bool, err error) {
	for _, step := range []struct {
		sig     syscall.Signal
		timeout time.Duration
	}{{syscall.SIGTERM, grace}, {syscall.SIGKILL, killTimeout}} {
		if err := syscall.Kill(pid, step.sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return killed, fmt.Errorf("sending %v to pid %d: %w", step.sig, pid, err)
		}
		killed = step.sig == syscall.SIGKILL
		for deadline := time.Now().Add(step.timeout); ProcessAlive(pid); time.Sleep(daemonPoll) {
			if time.Now().After(deadline) {
				break
			}
		}
		if !ProcessAlive(pid) {
			return killed, nil
		}
	}
	return killed, fmt.Errorf("pid %d survived SIGKILL for %v", pid, killTimeout)
}

// ours reports whether pid is alive (not a zombie, which only waits to be reaped) and its command
// line names a path under the state directory.
func (d Daemons) ours(pid int) bool {
	if pid <= 0 || !ProcessAlive(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), []byte(d.stateNeedle()))
}

// stateNeedle is what a daemon's command line contains: the state directory followed by a slash.
func (d Daemons) stateNeedle() string { return strings.TrimSuffix(d.StateDir, "/") + "/" }
