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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// leaderMessage matches what the operator logs (through client-go's leader election) once it
// leads; it reconciles nothing before.
const leaderMessage = `(?i)successfully acquired lease`

// startOperator starts the operator and waits until its /readyz answers.
func startOperator(ctx context.Context) {
	GinkgoHelper()
	Expect(operator.Start()).To(Succeed())
	GinkgoWriter.Printf("The operator, pid %d, metrics on %s\n", operator.PID(), operatorMetricsURL())
	Eventually(func() error {
		if err := operator.UnexpectedExit(); err != nil {
			return StopTrying("the operator exited while starting").Wrap(err)
		}
		return operator.Ready(ctx)
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(),
		"the operator's /readyz; log %s:\n%s", operator.LogPath, support.LogTail(operator.LogPath, 40))
}

// killOperator kills the operator with SIGKILL, as a node failure or an OOM kill would, and
// waits until it is gone.
func killOperator() {
	GinkgoHelper()
	pid := operator.PID()
	Expect(operator.Kill()).To(Succeed())
	Expect(support.ProcessAlive(pid)).To(BeFalse(), "operator pid %d still alive after SIGKILL", pid)
}

// waitForLeadership waits until the operator started last holds the leader lease.
func waitForLeadership(ctx context.Context) {
	GinkgoHelper()
	Eventually(func() (string, error) {
		if err := operator.UnexpectedExit(); err != nil {
			return "", StopTrying("the operator exited").Wrap(err)
		}
		return operator.LogSinceStart()
	}).WithContext(ctx).WithTimeout(60*time.Second).Should(MatchRegexp(leaderMessage),
		"the operator never became leader; log %s", operator.LogPath)
}

// operatorMetricsURL is the URL of the operator's metrics endpoint, over HTTPS with
// authentication and authorization (the default of --metrics-secure); the address is kept when
// the operator is restarted, so that Prometheus's scrape target stays valid. Empty before the
// first start.
func operatorMetricsURL() string {
	addr := operator.MetricsAddr()
	if addr == "" {
		return ""
	}
	return "https://" + addr + "/metrics"
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
