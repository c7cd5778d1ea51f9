package prometheus

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// scrapePage is the page with the scrape job of a Prometheus without the Prometheus Operator.
const scrapePage = "../../docs/olm.md"

// podTokenFile is the ServiceAccount token's path in a pod, which the page's job reads.
const podTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// scrapeJobBlock returns the page's ```yaml block that is a list of scrape jobs.
func scrapeJobBlock(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(scrapePage)
	if err != nil {
		t.Fatal(err)
	}
	blockRE := regexp.MustCompile("(?m)^```yaml\n(- job_name:(?s:.*?))\n```$")
	blocks := blockRE.FindAllStringSubmatch(string(data), -1)
	if len(blocks) != 1 {
		t.Fatalf("%s: %d ```yaml blocks of scrape jobs, want 1", scrapePage, len(blocks))
	}
	return blocks[0][1]
}

// TestDocsScrapeJob checks the scrape job docs/olm.md tells a Prometheus without the Prometheus
// Operator to use: promtool accepts it as the scrape_configs of a configuration (its token file,
// a pod's, replaced by one that exists here), and its job is the one the alert OaatOperatorDown
// watches, so that the alert does not fire for a healthy operator.
func TestDocsScrapeJob(t *testing.T) {
	block := scrapeJobBlock(t)
	var jobs []struct {
		JobName string `json:"job_name"`
	}
	if err := yaml.Unmarshal([]byte(block), &jobs); err != nil {
		t.Fatalf("%s: the scrape job: %v", scrapePage, err)
	}
	rules, err := os.ReadFile(ruleManifest)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`up\{job="([^"]+)"\}`).FindSubmatch(rules)
	if m == nil {
		t.Fatalf("%s: no up{job=...} in the alerts", ruleManifest)
	}
	if len(jobs) != 1 || jobs[0].JobName != string(m[1]) {
		t.Errorf("%s: the scrape jobs %+v: want one, named %q as the job of OaatOperatorDown in %s", scrapePage, jobs, m[1], ruleManifest)
	}

	if !strings.Contains(block, podTokenFile) {
		t.Fatalf("%s: the scrape job does not read %s", scrapePage, podTokenFile)
	}
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(token, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	checked := withoutKubernetesSD(t, strings.ReplaceAll(block, podTokenFile, token))
	if err := os.WriteFile(config, []byte("scrape_configs:\n"+checked), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool(t), "check", "config", config).CombinedOutput()
	t.Logf("promtool check config:\n%s", out)
	if err != nil {
		t.Fatalf("promtool check config: %v", err)
	}
}

// kubernetesSD is the part of a Prometheus kubernetes_sd_configs entry the page's job uses, read
// strictly: an unknown field or a misspelt one fails.
type kubernetesSD struct {
	Role       string `json:"role"`
	Namespaces *struct {
		Names []string `json:"names"`
	} `json:"namespaces,omitempty"`
}

// kubernetesSDRoles are the roles of Prometheus' Kubernetes service discovery.
var kubernetesSDRoles = []string{"node", "service", "pod", "endpoints", "endpointslice", "ingress"}

// sdBlock is the job's kubernetes_sd_configs list, as the page indents it.
var sdBlock = regexp.MustCompile(`(?m)^ {2}kubernetes_sd_configs:\n((?: {2}- .*\n| {4}.*\n)+)`)

// withoutKubernetesSD checks the job's kubernetes_sd_configs itself and returns the job with it
// replaced by a static target, for promtool to check the rest (scheme, TLS, authorization, the
// relabelling rules): Debian's Prometheus, and so its promtool, is built without Kubernetes
// service discovery and refuses the field. The page's SD entry must name a role of Prometheus'
// Kubernetes discovery and the namespace the operator is installed in by docs/olm.md.
func withoutKubernetesSD(t *testing.T, job string) string {
	t.Helper()
	m := sdBlock.FindStringSubmatchIndex(job + "\n")
	if m == nil {
		t.Fatalf("%s: the scrape job has no kubernetes_sd_configs (a static target alternates between the replicas)", scrapePage)
	}
	var sd []kubernetesSD
	if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll((job + "\n")[m[2]:m[3]], "\n  ", "\n")[2:]), &sd); err != nil {
		t.Fatalf("%s: kubernetes_sd_configs: %v", scrapePage, err)
	}
	if len(sd) != 1 || !slices.Contains(kubernetesSDRoles, sd[0].Role) || sd[0].Namespaces == nil ||
		!slices.Equal(sd[0].Namespaces.Names, []string{"oaat-operator"}) {
		t.Fatalf("%s: kubernetes_sd_configs %+v: want one entry of a Kubernetes SD role, of the namespace oaat-operator", scrapePage, sd)
	}
	return (job + "\n")[:m[0]] + "  static_configs:\n  - targets: [localhost:8443]\n" + (job + "\n")[m[1]:]
}
