//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// leaderMessage matches what the operator logs (through client-go's leader election) once it
// leads; it reconciles nothing before.
const leaderMessage = `(?i)successfully acquired lease`

// operatorProcess is bin/manager run as a separate process, as a Deployment would run it, with
// its output appended to one log file for the whole run.
type operatorProcess struct {
	binary     string
	kubeconfig string
	logPath    string

	mu        sync.Mutex
	cmd       *exec.Cmd
	done      chan struct{} // closed once the process has exited and been reaped
	exitErr   error         // why it exited, once done is closed
	stopping  bool          // the suite stopped or killed it on purpose
	probeAddr string
	logStart  int64 // size of the log when the process started
	// metricsAddr is where the operator serves its metrics, over HTTPS with authentication and
	// authorization (the default of --metrics-secure). Chosen at the first start and kept when the
	// operator is restarted, so that Prometheus's scrape target stays valid.
	metricsAddr string
}

// startOperator starts the operator and waits until its /readyz answers.
func startOperator(ctx context.Context) {
	GinkgoHelper()
	Expect(operator.start()).To(Succeed())
	Eventually(func() error {
		if err := operator.unexpectedExit(); err != nil {
			return StopTrying("the operator exited while starting").Wrap(err)
		}
		return operator.ready()
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(),
		"the operator's /readyz; log %s:\n%s", operator.logPath, logTail(operator.logPath, 40))
}

// killOperator kills the operator with SIGKILL, as a node failure or an OOM kill would, and
// waits until it is gone.
func killOperator() {
	GinkgoHelper()
	pid := operator.pid()
	Expect(operator.kill()).To(Succeed())
	Expect(processAlive(pid)).To(BeFalse(), "operator pid %d still alive after SIGKILL", pid)
}

// waitForLeadership waits until the operator started last holds the leader lease.
func waitForLeadership(ctx context.Context) {
	GinkgoHelper()
	Eventually(func() (string, error) {
		if err := operator.unexpectedExit(); err != nil {
			return "", StopTrying("the operator exited").Wrap(err)
		}
		return operator.logSinceStart()
	}).WithContext(ctx).WithTimeout(60*time.Second).Should(MatchRegexp(leaderMessage),
		"the operator never became leader; log %s", operator.logPath)
}

func (o *operatorProcess) start() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cmd != nil {
		return errors.New("the operator already runs")
	}
	logFile, err := os.OpenFile(o.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the process has its own descriptor
	info, err := logFile.Stat()
	if err != nil {
		return err
	}
	probeAddr := "127.0.0.1:" + strconv.Itoa(port)
	if o.metricsAddr == "" {
		metricsPort, err := freePort()
		if err != nil {
			return err
		}
		o.metricsAddr = "127.0.0.1:" + strconv.Itoa(metricsPort)
	}
	args := []string{
		"--kubeconfig", o.kubeconfig,
		"--leader-elect",
		"--leader-election-namespace", operatorNamespace,
		"--metrics-bind-address", o.metricsAddr,
		"--health-probe-bind-address", probeAddr,
		"--zap-log-level=debug",
	}
	fmt.Fprintf(logFile, "\n==== %s starting %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), o.binary, strings.Join(args, " "))
	cmd := exec.Command(o.binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so that a Ctrl-C in the terminal reaches the suite, which stops it in
	// order; and killed with the suite should the suite die without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", o.binary, err)
	}
	done := make(chan struct{})
	o.cmd, o.done, o.exitErr, o.stopping = cmd, done, nil, false
	o.probeAddr, o.logStart = probeAddr, info.Size()
	go func() {
		err := cmd.Wait()
		if err == nil {
			err = errors.New("exited with status 0")
		}
		o.mu.Lock()
		o.exitErr = err
		o.mu.Unlock()
		close(done)
	}()
	GinkgoWriter.Printf("Started the operator, pid %d, probes on %s, metrics on https://%s/metrics\n",
		cmd.Process.Pid, probeAddr, o.metricsAddr)
	return nil
}

// ready asks the operator's /readyz.
func (o *operatorProcess) ready() error {
	o.mu.Lock()
	addr := o.probeAddr
	o.mu.Unlock()
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("/readyz: %s: %s", resp.Status, body)
	}
	return nil
}

// metricsURL is the URL of the operator's metrics endpoint; empty before the first start.
func (o *operatorProcess) metricsURL() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.metricsAddr == "" {
		return ""
	}
	return "https://" + o.metricsAddr + "/metrics"
}

// pid is the running process's pid, 0 when none runs.
func (o *operatorProcess) pid() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cmd == nil {
		return 0
	}
	return o.cmd.Process.Pid
}

// unexpectedExit returns why the operator exited if it did so on its own.
func (o *operatorProcess) unexpectedExit() error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cmd == nil || o.stopping {
		return nil
	}
	select {
	case <-o.done:
		return fmt.Errorf("operator pid %d %w; last lines of %s:\n%s", o.cmd.Process.Pid, o.exitErr, o.logPath, logTail(o.logPath, 40))
	default:
		return nil
	}
}

// kill sends SIGKILL and waits until the process is reaped.
func (o *operatorProcess) kill() error {
	return o.signalAndWait(syscall.SIGKILL, 10*time.Second)
}

// stop stops the operator gracefully (SIGTERM, so that it releases its lease), with SIGKILL as a
// last resort.
func (o *operatorProcess) stop() error {
	if err := o.signalAndWait(syscall.SIGTERM, 30*time.Second); err != nil {
		GinkgoWriter.Printf("Stopping the operator: %v; sending SIGKILL\n", err)
		return o.kill()
	}
	return nil
}

func (o *operatorProcess) signalAndWait(sig syscall.Signal, timeout time.Duration) error {
	o.mu.Lock()
	cmd, done := o.cmd, o.done
	o.stopping = true
	o.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
	default:
		if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("sending %v to operator pid %d: %w", sig, cmd.Process.Pid, err)
		}
	}
	select {
	case <-done:
	case <-time.After(timeout):
		return fmt.Errorf("operator pid %d still runs %s after %v", cmd.Process.Pid, timeout, sig)
	}
	o.mu.Lock()
	o.cmd = nil
	o.mu.Unlock()
	GinkgoWriter.Printf("Operator pid %d stopped by %v\n", cmd.Process.Pid, sig)
	return nil
}

// logSinceStart returns what the running process has logged.
func (o *operatorProcess) logSinceStart() (string, error) {
	o.mu.Lock()
	start := o.logStart
	o.mu.Unlock()
	data, err := os.ReadFile(o.logPath)
	if err != nil {
		return "", err
	}
	if int64(len(data)) < start {
		return "", nil
	}
	return string(data[start:]), nil
}

// freePort returns a TCP port on the loopback address that nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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

// forbiddenLines returns the lines of the operator's log that report a request the API server
// refused: the operator lacks a permission it uses. Two refusals are not about permissions and are
// written to skipped instead: those of the NamespaceLifecycle admission plugin ("unable to create
// new content in namespace ... because it is being terminated"), which an event the operator sends
// just as a test's namespace is deleted meets, and those of the admission policies a test sets up
// to refuse pods on purpose (refusingPolicyPrefix).
func forbiddenLines(path string, skipped io.Writer) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !strings.Contains(strings.ToLower(line), "forbidden"):
		case strings.Contains(line, "because it is being terminated"),
			strings.Contains(line, "ValidatingAdmissionPolicy '"+refusingPolicyPrefix):
			fmt.Fprintf(skipped, "Not a permission problem: %s\n", line)
		default:
			found = append(found, line)
		}
	}
	return found, sc.Err()
}
