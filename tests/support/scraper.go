package support

import (
	"github.com/oaat-io/oaat-operator/hack/devkit"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Scraper is the identity a Prometheus scrapes the operator's metrics with: a ServiceAccount
// bound by a ClusterRoleBinding to the ClusterRole the operator ships for scrapers
// (oaat-operator-metrics-reader: get on /metrics).
type Scraper struct {
	Namespace      string
	ServiceAccount string
	ClusterRole    string
	// Binding names the ClusterRoleBinding; unique per suite, so that suites do not share it.
	Binding string
}

// Token makes the scraper's ServiceAccount and binding when missing and returns a token of the
// ServiceAccount, valid for an hour.
func (s Scraper) Token(ctx context.Context, cs kubernetes.Interface) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: s.ServiceAccount, Namespace: s.Namespace}}
	if _, err := cs.CoreV1().ServiceAccounts(s.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating ServiceAccount %s/%s: %w", s.Namespace, s.ServiceAccount, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: s.Binding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: s.ClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: s.ServiceAccount, Namespace: s.Namespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating ClusterRoleBinding %s: %w", s.Binding, err)
	}
	return ServiceAccountToken(ctx, cs, s.Namespace, s.ServiceAccount, time.Hour)
}

// ServiceAccountToken returns a token of the ServiceAccount from the TokenRequest API, valid for
// ttl.
func ServiceAccountToken(ctx context.Context, cs kubernetes.Interface, namespace, sa string, ttl time.Duration) (string, error) {
	token, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl.Seconds()))}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", namespace, sa, err)
	}
	if token.Status.Token == "" {
		return "", fmt.Errorf("the TokenRequest for ServiceAccount %s/%s returned no token", namespace, sa)
	}
	return token.Status.Token, nil
}

// MayGetMetrics asks the API server, with a SubjectAccessReview, whether the ServiceAccount may
// get /metrics, and returns the answer and its reason. A test that expects a scrape to be allowed
// or refused checks this first, so that the operator's answer proves its own authorization and
// not a mistake in the test's set-up.
func MayGetMetrics(ctx context.Context, cs kubernetes.Interface, namespace, sa string) (bool, string, error) {
	review, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:                  "system:serviceaccount:" + namespace + ":" + sa,
			Groups:                []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, "", fmt.Errorf("SubjectAccessReview of %s/%s on /metrics: %w", namespace, sa, err)
	}
	return review.Status.Allowed, review.Status.Reason, nil
}

// Delete removes the scraper's ClusterRoleBinding (the ServiceAccount goes with its namespace).
func (s Scraper) Delete(ctx context.Context, cs kubernetes.Interface) error {
	err := cs.RbacV1().ClusterRoleBindings().Delete(ctx, s.Binding, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting ClusterRoleBinding %s: %w", s.Binding, err)
	}
	return nil
}

// ScrapeJob is one scrape job of the operator's metrics as a ServiceMonitor of its metrics
// Service makes it: HTTPS (the operator's certificate is self-signed unless cert-manager issues
// one), the bearer token of a Scraper, every second.
type ScrapeJob struct {
	Name    string
	Targets []string
	// Labels are added to every series of the targets (a metric's own label of the same name is
	// kept as exported_NAME).
	Labels map[string]string
}

// StartScrapingPrometheus writes the token and a configuration with the job into dir and starts
// the Prometheus server binary on it, its TSDB in dir/data and its output in logPath; it returns
// the process and its base URL (see StartPrometheus).
func StartScrapingPrometheus(binary, dir, logPath, token string, job ScrapeJob, log io.Writer) (*devkit.Process, string, error) {
	return StartAlertingPrometheus(binary, dir, logPath, token, job, Alerting{}, log)
}

// Alerting is what a Prometheus alerts with: the rule file it evaluates every second and the
// Alertmanager it sends its alerts to. The zero value alerts on nothing.
type Alerting struct {
	// RuleFile is a Prometheus rule file (ScaleRules), or "".
	RuleFile string
	// Alertmanager is the Alertmanager's host:port, or "".
	Alertmanager string
}

// StartAlertingPrometheus is StartScrapingPrometheus with alerting: the rule file evaluated and
// the alerts sent to the Alertmanager.
func StartAlertingPrometheus(binary, dir, logPath, token string, job ScrapeJob, alerting Alerting, log io.Writer) (*devkit.Process, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return nil, "", err
	}
	configFile := filepath.Join(dir, "prometheus.yml")
	config := scrapeConfig(job, tokenFile) + alertingConfig(alerting)
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		return nil, "", err
	}
	return StartPrometheus(binary, configFile, filepath.Join(dir, "data"), logPath, log)
}

// yamlQuote quotes s as a JSON string, which is valid YAML.
func yamlQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// alertingConfig is the part of the Prometheus configuration that says what alerting names, its
// strings quoted (yamlQuote); "" for the zero Alerting.
func alertingConfig(a Alerting) string {
	var c strings.Builder
	if a.RuleFile != "" {
		c.WriteString("rule_files: [" + yamlQuote(a.RuleFile) + "]\n")
	}
	if a.Alertmanager != "" {
		c.WriteString("alerting:\n  alertmanagers:\n  - static_configs:\n    - targets: [" + yamlQuote(a.Alertmanager) + "]\n")
	}
	return c.String()
}

// scrapeConfig is the Prometheus configuration of one job, its strings quoted (yamlQuote).
func scrapeConfig(job ScrapeJob, tokenFile string) string {
	q := yamlQuote
	targets := make([]string, 0, len(job.Targets))
	for _, t := range job.Targets {
		targets = append(targets, q(t))
	}
	keys := make([]string, 0, len(job.Labels))
	for k := range job.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var labels strings.Builder
	if len(keys) > 0 {
		labels.WriteString("    labels:\n")
	}
	for _, k := range keys {
		fmt.Fprintf(&labels, "      %s: %s\n", k, q(job.Labels[k]))
	}
	return `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
- job_name: ` + q(job.Name) + `
  scheme: https
  metrics_path: /metrics
  tls_config:
    insecure_skip_verify: true
  authorization:
    credentials_file: ` + q(tokenFile) + `
  static_configs:
  - targets: [` + strings.Join(targets, ", ") + `]
` + labels.String()
}
