//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The identities that scrape the operator's metrics: Prometheus's ServiceAccount, bound to the
// ClusterRole config/rbac grants scrapers, and one that holds no binding at all.
const (
	monitoringNamespace   = "monitoring"
	prometheusSA          = "prometheus"
	unprivilegedSA        = "unprivileged"
	metricsReaderRole     = "oaat-operator-metrics-reader"
	prometheusRoleBinding = "e2e-prometheus-oaat-operator-metrics-reader"
)

// scrapeJob is the job name of the scrape config, the one the OaatOperatorDown alert of
// config/prometheus/alerts.yaml expects (the name the ServiceMonitor gives the job).
const scrapeJob = "oaat-operator-controller-manager-metrics-service"

// prometheusProcess is a real Prometheus server that scrapes the operator every second, with its
// configuration, token and TSDB under dir.
type prometheusProcess struct {
	binary  string
	dir     string
	logPath string

	mu      sync.Mutex
	proc    *devkit.Process // nil until started
	baseURL string
}

// startPrometheus sets up Prometheus's identity, writes its configuration and starts it as prom
// (set before the process starts, so that the suite's teardown stops it whatever fails after),
// then waits until it is ready. It does not wait for the first scrape: Prometheus syncs its
// scrape targets some 5 s after it starts (the discovery manager's fixed update interval), which
// the tests that query it wait for (waitForTarget) while the others run.
func startPrometheus(ctx context.Context) {
	GinkgoHelper()
	binary, err := support.PrometheusBinary()
	Expect(err).NotTo(HaveOccurred())
	p := &prometheusProcess{
		binary:  binary,
		dir:     filepath.Join(cluster.StateDir, "prometheus"),
		logPath: filepath.Join(cluster.StateDir, "logs", "prometheus.log"),
	}
	prom = p
	Expect(os.MkdirAll(p.dir, 0o755)).To(Succeed())
	// A fresh TSDB each run: series of an earlier run must not answer this run's queries.
	Expect(os.RemoveAll(filepath.Join(p.dir, "data"))).To(Succeed())

	token := ensureScraperIdentities(ctx)
	target := strings.TrimSuffix(strings.TrimPrefix(operator.metricsURL(), "https://"), "/metrics")
	Expect(target).NotTo(BeEmpty(), "the operator has no metrics address")
	alerting := startAlerting(ctx, p.dir)
	Expect(p.start(token, support.ScrapeJob{Name: scrapeJob, Targets: []string{target}}, alerting)).To(Succeed())
	Eventually(func() error {
		if err := p.unexpectedExit(); err != nil {
			return StopTrying("Prometheus exited while starting").Wrap(err)
		}
		return p.ready(ctx)
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "Prometheus's /-/ready; log %s", p.logPath)
}

// start writes Prometheus's configuration (support.StartAlertingPrometheus: every second, HTTPS,
// the bearer token; the rules and the Alertmanager of alerting) into p.dir and starts it.
func (p *prometheusProcess) start(token string, job support.ScrapeJob, alerting support.Alerting) error {
	// One log per run, like the operator's.
	if err := os.Remove(p.logPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	proc, baseURL, err := support.StartAlertingPrometheus(p.binary, p.dir, p.logPath, token, job, alerting, GinkgoWriter)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.proc, p.baseURL = proc, baseURL
	p.mu.Unlock()
	GinkgoWriter.Printf("Prometheus, pid %d, on %s\n", proc.PID(), baseURL)
	return nil
}

// running returns the process, nil when it was never started.
func (p *prometheusProcess) running() *devkit.Process {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proc
}

// pid is the process's pid, 0 when it was never started.
func (p *prometheusProcess) pid() int {
	if proc := p.running(); proc != nil {
		return proc.PID()
	}
	return 0
}

// unexpectedExit returns why Prometheus exited if it did so before the suite stopped it.
func (p *prometheusProcess) unexpectedExit() error {
	return p.running().UnexpectedExit(20)
}

// stop stops Prometheus with SIGTERM (it closes its TSDB), with SIGKILL as a last resort, and
// waits until it is reaped.
func (p *prometheusProcess) stop() error {
	proc := p.running()
	if proc == nil {
		return nil
	}
	return proc.Stop(30 * time.Second)
}

func (p *prometheusProcess) url(path string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.baseURL + path
}

// ready asks Prometheus's /-/ready.
func (p *prometheusProcess) ready(ctx context.Context) error {
	return devkit.CheckReady(ctx, p.url("/-/ready"), 2*time.Second)
}

// waitForTarget waits until Prometheus has scraped the operator successfully.
func (p *prometheusProcess) waitForTarget(ctx context.Context) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		expectTargetUp(ctx, g)
	}).WithContext(ctx).WithTimeout(60*time.Second).WithPolling(500*time.Millisecond).Should(Succeed(),
		"Prometheus never scraped the operator at %s; log %s", operator.metricsURL(), p.logPath)
}

// expectTargetUp checks that Prometheus's last scrape of the operator succeeded.
func expectTargetUp(ctx context.Context, g Gomega) {
	up := promQuery(ctx, g, `up{job="`+scrapeJob+`"} == 1`)
	g.Expect(up).To(HaveLen(1), "up{job=%q} == 1", scrapeJob)
}

// promSample is one series of an instant vector.
type promSample = support.PromSample

// promQuery runs an instant query through Prometheus's HTTP API and returns the vector.
func promQuery(ctx context.Context, g Gomega, query string) []promSample {
	GinkgoHelper()
	samples, err := support.QueryPrometheus(ctx, prom.url(""), query)
	g.Expect(err).NotTo(HaveOccurred())
	return samples
}

// scraper is Prometheus's identity: its ServiceAccount, bound to the metrics-reader ClusterRole of
// config/rbac.
var scraper = support.Scraper{
	Namespace: monitoringNamespace, ServiceAccount: prometheusSA, ClusterRole: metricsReaderRole,
	Binding: prometheusRoleBinding,
}

// ensureScraperIdentities creates, unless they exist (the cluster's data outlives a run), the
// monitoring namespace, Prometheus's ServiceAccount and binding (scraper) and a ServiceAccount
// without any binding, and returns a token of the first. It then checks with SubjectAccessReviews
// that the first may get /metrics and the second may not, so that a 403 or a 200 of the operator
// proves its own authorization and not a test set-up mistake.
func ensureScraperIdentities(ctx context.Context) string {
	GinkgoHelper()
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: monitoringNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: unprivilegedSA, Namespace: monitoringNamespace}},
	} {
		if err := k8sClient.Create(ctx, obj); !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred(), "creating %T %s", obj, obj.GetName())
		}
	}
	// The ClusterRole comes from config/local: the binding grants nothing without it.
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: metricsReaderRole}, &rbacv1.ClusterRole{})).To(Succeed(),
		"ClusterRole %s of config/local", metricsReaderRole)
	token, err := scraper.Token(ctx, clientset)
	Expect(err).NotTo(HaveOccurred())
	for sa, allowed := range map[string]bool{prometheusSA: true, unprivilegedSA: false} {
		Eventually(func(g Gomega) {
			may, reason, err := support.MayGetMetrics(ctx, clientset, monitoringNamespace, sa)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(may).To(Equal(allowed), "may %s get /metrics: %s", sa, reason)
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}
	return token
}

// mintToken returns a token of the ServiceAccount, valid for longer than the suite may run.
func mintToken(ctx context.Context, namespace, sa string) string {
	GinkgoHelper()
	token, err := support.ServiceAccountToken(ctx, clientset, namespace, sa, 2*time.Hour)
	Expect(err).NotTo(HaveOccurred())
	return token
}

// scrapeOperator GETs the operator's metrics as a scraper would, with the bearer token unless it
// is empty, from any Ginkgo process. The certificate is self-signed: it is not verified.
func scrapeOperator(ctx context.Context, token string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, shared.MetricsURL, http.NoBody)
	if err != nil {
		return nil, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the operator's self-signed certificate
			DisableKeepAlives: true,
		},
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}
