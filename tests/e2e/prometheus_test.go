//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
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
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	proc    *support.Process // nil until started
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

	ensureScraperIdentities(ctx)
	tokenFile := filepath.Join(p.dir, "token")
	Expect(os.WriteFile(tokenFile, []byte(mintToken(ctx, monitoringNamespace, prometheusSA)), 0o600)).To(Succeed())

	target := strings.TrimSuffix(strings.TrimPrefix(operator.metricsURL(), "https://"), "/metrics")
	Expect(target).NotTo(BeEmpty(), "the operator has no metrics address")
	configFile := filepath.Join(p.dir, "prometheus.yml")
	Expect(os.WriteFile(configFile, []byte(prometheusConfig(target, tokenFile)), 0o644)).To(Succeed())

	Expect(p.start(configFile)).To(Succeed())
	Eventually(func() error {
		if err := p.unexpectedExit(); err != nil {
			return StopTrying("Prometheus exited while starting").Wrap(err)
		}
		return p.ready(ctx)
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "Prometheus's /-/ready; log %s", p.logPath)
}

// prometheusConfig scrapes the operator's HTTPS endpoint every second, with the token in
// tokenFile. The operator's serving certificate is self-signed, hence insecure_skip_verify.
// Strings are written JSON-quoted, which YAML reads as double-quoted scalars.
func prometheusConfig(target, tokenFile string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
- job_name: ` + q(scrapeJob) + `
  scheme: https
  metrics_path: /metrics
  tls_config:
    insecure_skip_verify: true
  authorization:
    type: Bearer
    credentials_file: ` + q(tokenFile) + `
  static_configs:
  - targets: [` + q(target) + `]
`
}

func (p *prometheusProcess) start(configFile string) error {
	// One log per run, like the operator's.
	if err := os.Remove(p.logPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	proc, baseURL, err := support.StartPrometheus(p.binary, configFile, filepath.Join(p.dir, "data"), p.logPath, GinkgoWriter)
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
func (p *prometheusProcess) running() *support.Process {
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
	return support.CheckReady(ctx, p.url("/-/ready"), 2*time.Second)
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

// ensureScraperIdentities creates, unless they exist (the cluster's data outlives a run), the
// monitoring namespace, Prometheus's ServiceAccount bound to the metrics-reader ClusterRole of
// config/rbac, and a ServiceAccount without any binding. It then checks with SubjectAccessReviews
// that the first may get /metrics and the second may not, so that a 403 or a 200 of the operator
// proves its own authorization and not a test set-up mistake.
func ensureScraperIdentities(ctx context.Context) {
	GinkgoHelper()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: monitoringNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: prometheusSA, Namespace: monitoringNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: unprivilegedSA, Namespace: monitoringNamespace}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: prometheusRoleBinding},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
			Subjects: []rbacv1.Subject{{
				Kind: rbacv1.ServiceAccountKind, Name: prometheusSA, Namespace: monitoringNamespace,
			}},
		},
	}
	for _, obj := range objs {
		err := k8sClient.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		Expect(err).NotTo(HaveOccurred(), "creating %T %s", obj, obj.GetName())
	}
	// The ClusterRole comes from config/local: the binding grants nothing without it.
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: metricsReaderRole}, &rbacv1.ClusterRole{})).To(Succeed(),
		"ClusterRole %s of config/local", metricsReaderRole)
	for sa, allowed := range map[string]bool{prometheusSA: true, unprivilegedSA: false} {
		Eventually(func(g Gomega) {
			review, err := clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{
					User: "system:serviceaccount:" + monitoringNamespace + ":" + sa,
					Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + monitoringNamespace,
						"system:authenticated"},
					NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
				},
			}, metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(review.Status.Allowed).To(Equal(allowed), "may %s get /metrics: %s", sa, review.Status.Reason)
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}
}

// mintToken returns a token of the ServiceAccount from the TokenRequest API, valid for longer than
// the suite may run.
func mintToken(ctx context.Context, namespace, sa string) string {
	GinkgoHelper()
	token, err := clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](2 * 60 * 60)},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred(), "TokenRequest for ServiceAccount %s/%s", namespace, sa)
	Expect(token.Status.Token).NotTo(BeEmpty())
	return token.Status.Token
}

// scrapeOperator GETs the operator's metrics as a scraper would, with the bearer token unless it
// is empty. The certificate is self-signed: it is not verified.
func scrapeOperator(ctx context.Context, token string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, operator.metricsURL(), http.NoBody)
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
