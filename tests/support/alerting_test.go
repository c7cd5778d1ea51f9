package support

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestScaleRanges(t *testing.T) {
	for expr, want := range map[string]string{
		`rate(x[5m])`: `rate(x[5s])`,
		`increase(x_sum[7d]) / increase(x_count[7d])`: `increase(x_sum[2h48m]) / increase(x_count[2h48m])`,
		`max_over_time(rate(x[1h])[1h:5m])`:           `max_over_time(rate(x[1m])[1m:5s])`,
		`max_over_time(x[1h:])`:                       `max_over_time(x[1m:])`,
		`x{a="[5m]"} > 3`:                             `x{a="[5s]"} > 3`, // a label value is not told apart: none of the rules has one
		`absent(up == 1)`:                             `absent(up == 1)`,
	} {
		got, err := scaleRanges(expr, 60)
		if err != nil || got != want {
			t.Errorf("scaleRanges(%q) = %q, %v; want %q", expr, got, err, want)
		}
	}
	if got, err := scaleRanges(`rate(x[30ms])`, 60); err == nil {
		t.Errorf("30ms / 60 is below Prometheus's millisecond, but scaleRanges gave %q", got)
	}
}

// The bundle's own PrometheusRule, scaled: every `for:` divided by 60, the 7-day windows of
// OaatItemRunTooLong too, and a rule file that promtool accepts.
func TestScaleRulesOfTheBundle(t *testing.T) {
	manifest, err := os.ReadFile("../../config/prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := ScaleRules(manifest, AlertScale)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
				For   string `json:"for"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(out, &file); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			got[r.Alert] = r.For
			if strings.Contains(r.Expr, "[7d]") {
				t.Errorf("%s: a 7-day window is left: %s", r.Alert, r.Expr)
			}
			if r.Alert == "OaatItemRunTooLong" && !strings.Contains(r.Expr, "[2h48m]") {
				t.Errorf("OaatItemRunTooLong: no 7d/60 window: %s", r.Expr)
			}
		}
	}
	for alert, want := range map[string]string{
		"OaatItemFailingRepeatedly": "10s", "OaatItemOverdue": "15s", "OaatCircuitBreakerOpen": "15s",
		"OaatOperatorDown": "5s", "OaatLockOverCapacity": "30s", "OaatItemRunTooLong": "",
	} {
		if f, ok := got[alert]; !ok || f != want {
			t.Errorf("%s: for %q (present %v), want %q", alert, f, ok, want)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool (Debian's prometheus package, make system-packages): %v", err)
	}
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", rules).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
	// The configuration the end-to-end suite's Prometheus alerts with (promtool checks its rule
	// file too).
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := scrapeConfig(ScrapeJob{Name: "svc", Targets: []string{"127.0.0.1:8443"}}, token) +
		alertingConfig(Alerting{RuleFile: rules, Alertmanager: "127.0.0.1:9093"})
	configFile := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "config", configFile).CombinedOutput(); err != nil {
		t.Errorf("promtool check config: %v\n%s\n%s", err, out, config)
	}
}

func TestScaleRulesRefusesWhatIsNotAPrometheusRule(t *testing.T) {
	if _, err := ScaleRules([]byte("kind: ConfigMap\ndata: {}\n"), AlertScale); err == nil {
		t.Error("a ConfigMap was taken for a PrometheusRule")
	}
}

const userRoute = `route:
  receiver: default
  routes:
  - receiver: team
    matchers: ['alertname =~ "Oaat.*"']
    group_wait: 30s
    group_interval: 5m
    repeat_interval: 4h
receivers:
- name: default
- name: team
  webhook_configs:
  - url: https://chat.example.com/hooks/oaat
`

// The route's timings are divided, the webhook's URL replaced, and amtool accepts the result.
func TestAlertmanagerConfig(t *testing.T) {
	out, err := AlertmanagerConfig([]byte(userRoute), AlertScale, "http://127.0.0.1:1/hook")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"group_wait: 500ms", "group_interval: 5s", "repeat_interval: 4m", "url: http://127.0.0.1:1/hook"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	amtool, err := exec.LookPath("amtool")
	if err != nil {
		t.Fatalf("amtool (Debian's prometheus-alertmanager package, make system-packages): %v", err)
	}
	file := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(amtool, "check-config", file).CombinedOutput(); err != nil {
		t.Errorf("amtool check-config: %v\n%s", err, out)
	}
	if _, err := AlertmanagerConfig([]byte("route:\n  receiver: default\nreceivers:\n- name: default\n"), AlertScale, "http://x/"); err == nil {
		t.Error("a configuration without a webhook receiver was accepted")
	}
}

func TestAlertReceiverKeepsEveryAlert(t *testing.T) {
	r := StartAlertReceiver()
	defer r.Close()
	payload := `{"version":"4","status":"firing","alerts":[
		{"status":"firing","labels":{"alertname":"A","item":"x"}},
		{"status":"resolved","labels":{"alertname":"B"}}]}`
	resp, err := http.Post(r.URL(), "application/json", bytes.NewBufferString(payload)) //nolint:noctx // a test's loopback server
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	notes, err := r.Notices()
	if err != nil || len(notes) != 2 {
		t.Fatalf("notices %v, %v; want 2", notes, err)
	}
	if notes[0].Status != "firing" || notes[0].Labels["item"] != "x" || notes[1].Status != "resolved" || notes[1].Labels["alertname"] != "B" {
		t.Errorf("notices %+v", notes)
	}
	resp, err = http.Post(r.URL(), "application/json", bytes.NewBufferString("{")) //nolint:noctx // a test's loopback server
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if _, err := r.Notices(); err == nil {
		t.Error("a notification that could not be read went unreported")
	}
}
