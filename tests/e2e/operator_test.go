//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

// leaderMessage matches what the operator logs (through client-go's leader election) once it
// leads; it reconciles nothing before.
const leaderMessage = `(?i)successfully acquired lease`

// operatorProcess is bin/manager run as a separate process, as a Deployment would run it, with
// its output appended to one log file for the whole run. It can be stopped and started again.
type operatorProcess struct {
	binary     string
	kubeconfig string
	logPath    string

	mu        sync.Mutex
	proc      *devkit.Process // the running process; nil when none runs
	probeAddr string
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
		"the operator's /readyz; log %s:\n%s", operator.logPath, devkit.LogTail(operator.logPath, 40))
}

// killOperator kills the operator with SIGKILL, as a node failure or an OOM kill would, and
// waits until it is gone.
func killOperator() {
	GinkgoHelper()
	pid := operator.pid()
	Expect(operator.kill()).To(Succeed())
	Expect(devkit.ProcessAlive(pid)).To(BeFalse(), "operator pid %d still alive after SIGKILL", pid)
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
	port, err := devkit.FreePort()
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc != nil {
		return errors.New("the operator already runs")
	}
	probeAddr := "127.0.0.1:" + strconv.Itoa(port)
	if o.metricsAddr == "" {
		metricsPort, err := devkit.FreePort()
		if err != nil {
			return err
		}
		o.metricsAddr = "127.0.0.1:" + strconv.Itoa(metricsPort)
	}
	proc, err := devkit.StartProcess(devkit.ProcessSpec{
		Name:   "operator",
		Binary: o.binary,
		Args: devkit.ManagerFlags{
			Kubeconfig: o.kubeconfig, MetricsAddr: o.metricsAddr, ProbeAddr: probeAddr, LeaderElect: true,
			Extra: []string{"--zap-log-level=debug", "--notify-group-sink-prefixes=" + sink.URL("/")},
		}.Args(),
		LogPath: o.logPath,
		Log:     GinkgoWriter,
	})
	if err != nil {
		return err
	}
	o.proc, o.probeAddr = proc, probeAddr
	GinkgoWriter.Printf("The operator, pid %d, probes on %s, metrics on https://%s/metrics\n",
		proc.PID(), probeAddr, o.metricsAddr)
	return nil
}

// ready asks the operator's /readyz.
func (o *operatorProcess) ready() error {
	o.mu.Lock()
	addr := o.probeAddr
	o.mu.Unlock()
	return devkit.CheckReady(context.Background(), "http://"+addr+"/readyz", time.Second)
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

// running returns the running process, nil when none runs.
func (o *operatorProcess) running() *devkit.Process {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.proc
}

// pid is the running process's pid, 0 when none runs.
func (o *operatorProcess) pid() int {
	if p := o.running(); p != nil {
		return p.PID()
	}
	return 0
}

// unexpectedExit returns why the operator exited if it did so on its own.
func (o *operatorProcess) unexpectedExit() error {
	if o == nil {
		return nil
	}
	return o.running().UnexpectedExit(40)
}

// kill sends SIGKILL and waits until the process is reaped.
func (o *operatorProcess) kill() error {
	return o.signalAndWait(func(p *devkit.Process) error { return p.Signal(syscall.SIGKILL, 10*time.Second) })
}

// stop stops the operator gracefully (SIGTERM, so that it releases its lease), with SIGKILL as a
// last resort.
func (o *operatorProcess) stop() error {
	return o.signalAndWait(func(p *devkit.Process) error { return p.Stop(30 * time.Second) })
}

// signalAndWait ends the running process with end and, once it is reaped, forgets it.
func (o *operatorProcess) signalAndWait(end func(*devkit.Process) error) error {
	p := o.running()
	if p == nil {
		return nil
	}
	if err := end(p); err != nil {
		return err
	}
	o.mu.Lock()
	o.proc = nil
	o.mu.Unlock()
	return nil
}

// logSinceStart returns what the running process has logged.
func (o *operatorProcess) logSinceStart() (string, error) {
	p := o.running()
	if p == nil {
		return "", errors.New("the operator does not run")
	}
	return p.LogSinceStart()
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
