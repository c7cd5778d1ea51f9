// Package devkit is what the hack/ tools and the test suites share to run things locally: daemons
// that outlive the command that started them (Daemons, hack/processes), processes supervised for
// the length of a test (StartProcess), the operator run outside the cluster with a
// ServiceAccount's rights (LocalOperator, WriteServiceAccountKubeconfig, ManagerFlags), and small
// checks of files and readiness. It holds no test assertion: tests/support builds the suites'
// fixtures on it.
package devkit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// killTimeout bounds how long Stop waits for a process to be reaped after SIGKILL.
const killTimeout = 10 * time.Second

// ProcessSpec describes a program a suite runs as a child process.
type ProcessSpec struct {
	// Name names the process in messages and errors.
	Name string
	// Binary and Args are the program and its arguments.
	Binary string
	Args   []string
	// Env is added to the suite's environment.
	Env []string
	// LogPath is the file the process's standard output and error are appended to.
	LogPath string
	// Log receives what happens to the process (started, signalled); nil discards it.
	Log io.Writer
}

// Process is a child process a suite started with StartProcess. It runs in its own process group,
// so that a Ctrl-C in the terminal reaches the suite only, which stops it in order, and it is
// killed with the suite should the suite die without stopping it. It is safe for concurrent use.
type Process struct {
	// Name and LogPath are those of the spec.
	Name    string
	LogPath string

	log      io.Writer
	cmd      *exec.Cmd
	done     chan struct{} // closed once the process has exited and been reaped
	logStart int64         // size of the log when the process started

	mu       sync.Mutex
	exitErr  error // why it exited, once done is closed
	stopping bool  // the suite stopped it on purpose
}

// StartProcess starts the program of spec, its output appended to spec.LogPath after a line that
// says when and how it started, and reaps it in the background once it exits.
func StartProcess(spec ProcessSpec) (*Process, error) {
	cmd, logStart, err := startLogged(spec, &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL})
	if err != nil {
		return nil, err
	}
	p := &Process{
		Name: spec.Name, LogPath: spec.LogPath, log: spec.Log,
		cmd: cmd, done: make(chan struct{}), logStart: logStart,
	}
	if p.log == nil {
		p.log = io.Discard
	}
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
	fmt.Fprintf(p.log, "Started %s, pid %d, log %s\n", p.Name, cmd.Process.Pid, p.LogPath)
	return p, nil
}

// startLogged starts the program of spec with attr, its standard input /dev/null and its output
// appended to spec.LogPath after a line that says when and how it started; it returns the command
// and the size of the log before that line.
func startLogged(spec ProcessSpec, attr *syscall.SysProcAttr) (*exec.Cmd, int64, error) {
	logFile, err := os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = logFile.Close() }() // the process has its own descriptor
	info, err := logFile.Stat()
	if err != nil {
		return nil, 0, err
	}
	fmt.Fprintf(logFile, "\n==== %s starting %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), spec.Binary, strings.Join(spec.Args, " "))
	cmd := exec.Command(spec.Binary, spec.Args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("starting %s: %w", spec.Binary, err)
	}
	return cmd, info.Size(), nil
}

// PID returns the process's pid.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Reaped reports whether the process has exited and been reaped.
func (p *Process) Reaped() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// UnexpectedExit returns why the process exited, with the last tailLines lines of its log, if it
// exited on its own: nil while it runs, once the suite signalled it, or for a nil process.
func (p *Process) UnexpectedExit(tailLines int) error {
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
		return fmt.Errorf("%s (pid %d) %w; last lines of %s:\n%s", p.Name, p.PID(), p.exitErr, p.LogPath, LogTail(p.LogPath, tailLines))
	default:
		return nil
	}
}

// Signal sends sig, unless the process has already exited, and waits up to timeout until it is
// reaped. From then on its exit is no longer unexpected.
func (p *Process) Signal(sig syscall.Signal, timeout time.Duration) error {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("sending %v to %s (pid %d): %w", sig, p.Name, p.PID(), err)
	}
	select {
	case <-p.done:
		fmt.Fprintf(p.log, "Stopped %s (pid %d) with %v\n", p.Name, p.PID(), sig)
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%s (pid %d) still runs %s after %v", p.Name, p.PID(), timeout, sig)
	}
}

// Stop sends SIGTERM, then SIGKILL if the process still runs after grace; it returns once the
// process has been reaped, or an error if even SIGKILL did not end it within 10 s.
func (p *Process) Stop(grace time.Duration) error {
	err := p.Signal(syscall.SIGTERM, grace)
	if err == nil {
		return nil
	}
	fmt.Fprintf(p.log, "%v: sending SIGKILL\n", err)
	return p.Signal(syscall.SIGKILL, killTimeout)
}

// LogSinceStart returns what the process has logged since it started.
func (p *Process) LogSinceStart() (string, error) {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return "", err
	}
	if int64(len(data)) < p.logStart {
		return "", nil
	}
	return string(data[p.logStart:]), nil
}

// FreePort returns a TCP port on the loopback address that nothing listens on.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ProcessAlive reports whether the process exists and is not a zombie (a zombie has exited and
// only waits to be reaped). It reads /proc: Linux only.
func ProcessAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may hold spaces.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// ProcessesUsing lists the live processes, other than this one, whose command line or environment
// names a path under dir, each as "pid N: command line", sorted. It reads /proc: Linux only.
func ProcessesUsing(dir string) []string {
	needle := []byte(strings.TrimSuffix(dir, "/") + "/")
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !ProcessAlive(pid) {
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

// LogTail returns the last n lines of a file, or a note that it cannot be read.
func LogTail(path string, n int) string {
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
