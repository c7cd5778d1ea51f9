package support

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

// The alerting path from a metric to a person, as the end-to-end suite runs it: the bundle's
// PrometheusRule loaded into a real Prometheus, which sends its alerts to a real Alertmanager
// configured with the route docs/metrics-and-alerts.md gives, which notifies a webhook receiver
// (AlertReceiver). Only the times change, all by one factor (AlertScale).

// AlertScale divides every time of the alerting path in the end-to-end suite: each rule's `for:`
// and the range windows of its expression (ScaleRules), and the route's group_wait,
// group_interval and repeat_interval (AlertmanagerConfig). An alert that fires after 15 minutes
// in production fires after 15 seconds there. tests/prometheus checks the production values with
// promtool.
const AlertScale = 60

// rangeRE is a range window of PromQL: [5m], or a subquery's [1h:5m] (the step may be empty).
var rangeRE = regexp.MustCompile(`\[(\d[0-9a-z]*)(?::(\d[0-9a-z]*)?)?\]`)

// scaleDuration divides a Prometheus duration ("15m", "7d") by factor. It is an error when the
// result is below a millisecond, which Prometheus's durations cannot say.
func scaleDuration(s string, factor int64) (string, error) {
	d, err := model.ParseDuration(s)
	if err != nil {
		return "", err
	}
	scaled := time.Duration(d) / time.Duration(factor)
	if scaled < time.Millisecond {
		return "", fmt.Errorf("%s divided by %d is below a millisecond", s, factor)
	}
	return model.Duration(scaled).String(), nil
}

// scaleRanges divides every range window (and subquery step) of the PromQL expression by factor.
func scaleRanges(expr string, factor int64) (string, error) {
	var firstErr error
	out := rangeRE.ReplaceAllStringFunc(expr, func(m string) string {
		parts := rangeRE.FindStringSubmatch(m)
		r, err := scaleDuration(parts[1], factor)
		step := parts[2]
		if err == nil && step != "" {
			step, err = scaleDuration(step, factor)
		}
		switch {
		case err != nil:
			if firstErr == nil {
				firstErr = err
			}
			return m
		case strings.Contains(m, ":"): // a subquery, its step scaled or left to the default
			return "[" + r + ":" + step + "]"
		default:
			return "[" + r + "]"
		}
	})
	return out, firstErr
}

// RuleGroups returns the rule groups of the PrometheusRule manifest (monitoring.coreos.com/v1, as
// the bundle ships it), as a Prometheus rule file has them under `groups`. It is an error when the
// manifest is not a PrometheusRule with rule groups.
func RuleGroups(manifest []byte) ([]map[string]any, error) {
	var rule struct {
		Kind string `json:"kind"`
		Spec struct {
			Groups []map[string]any `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(manifest, &rule); err != nil {
		return nil, err
	}
	if rule.Kind != "PrometheusRule" || len(rule.Spec.Groups) == 0 {
		return nil, fmt.Errorf("not a PrometheusRule with rule groups (kind %q, %d groups)", rule.Kind, len(rule.Spec.Groups))
	}
	return rule.Spec.Groups, nil
}

// ScaleRules returns the rule groups of the PrometheusRule manifest (RuleGroups) as a Prometheus
// rule file, with each rule's `for:` and each range window of its expression divided by factor;
// everything else is kept as it is.
func ScaleRules(manifest []byte, factor int64) ([]byte, error) {
	groups, err := RuleGroups(manifest)
	if err != nil {
		return nil, err
	}
	for _, group := range groups {
		rules, ok := group["rules"].([]any)
		if !ok {
			return nil, fmt.Errorf("rule group %v has no rules", group["name"])
		}
		for _, r := range rules {
			if err := scaleRule(r, factor); err != nil {
				return nil, fmt.Errorf("rule group %v: %w", group["name"], err)
			}
		}
	}
	return yaml.Marshal(map[string]any{"groups": groups})
}

// scaleRule divides the rule's `for:` and its expression's range windows by factor, in place.
func scaleRule(r any, factor int64) error {
	rule, ok := r.(map[string]any)
	if !ok {
		return fmt.Errorf("a rule is not a mapping: %v", r)
	}
	name := fmt.Sprint(rule["alert"], rule["record"])
	if f, ok := rule["for"].(string); ok {
		scaled, err := scaleDuration(f, factor)
		if err != nil {
			return fmt.Errorf("%s: for: %w", name, err)
		}
		rule["for"] = scaled
	}
	expr, ok := rule["expr"].(string)
	if !ok {
		return fmt.Errorf("%s: no expr", name)
	}
	scaled, err := scaleRanges(expr, factor)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	rule["expr"] = scaled
	return nil
}

// routeTimings are the durations of an Alertmanager route that AlertmanagerConfig scales.
var routeTimings = []string{"group_wait", "group_interval", "repeat_interval"}

// AlertmanagerConfig turns an Alertmanager configuration as a user writes it (the route of
// docs/metrics-and-alerts.md) into the one the suite runs: the timings of every route divided by
// factor, and the URL of every webhook receiver replaced by webhookURL. It is an error when the
// configuration has no route or no webhook receiver.
func AlertmanagerConfig(config []byte, factor int64, webhookURL string) ([]byte, error) {
	var c map[string]any
	if err := yaml.Unmarshal(config, &c); err != nil {
		return nil, err
	}
	route, ok := c["route"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the configuration has no route")
	}
	if err := scaleRoute(route, factor); err != nil {
		return nil, err
	}
	receivers, _ := c["receivers"].([]any)
	webhooks := 0
	for _, r := range receivers {
		receiver, _ := r.(map[string]any)
		hooks, _ := receiver["webhook_configs"].([]any)
		for _, h := range hooks {
			if hook, ok := h.(map[string]any); ok {
				hook["url"] = webhookURL
				webhooks++
			}
		}
	}
	if webhooks == 0 {
		return nil, fmt.Errorf("the configuration has no webhook receiver")
	}
	return yaml.Marshal(c)
}

// scaleRoute divides the route's timings, and those of its child routes, by factor, in place.
func scaleRoute(route map[string]any, factor int64) error {
	for _, key := range routeTimings {
		if v, ok := route[key].(string); ok {
			scaled, err := scaleDuration(v, factor)
			if err != nil {
				return fmt.Errorf("route %s: %w", key, err)
			}
			route[key] = scaled
		}
	}
	children, _ := route["routes"].([]any)
	for _, child := range children {
		if r, ok := child.(map[string]any); ok {
			if err := scaleRoute(r, factor); err != nil {
				return err
			}
		}
	}
	return nil
}

// AlertmanagerBinary is the Alertmanager a suite runs: $ALERTMANAGER, else Debian's
// prometheus-alertmanager (which make system-packages installs) or alertmanager on the PATH.
func AlertmanagerBinary() (string, error) {
	if p := os.Getenv("ALERTMANAGER"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("ALERTMANAGER=%s: %w", p, err)
		}
		return p, nil
	}
	for _, name := range []string{"prometheus-alertmanager", "alertmanager"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Alertmanager on the PATH: install the prometheus-alertmanager package " +
		"(make system-packages does) or name one in ALERTMANAGER")
}

// StartAlertmanager starts the Alertmanager binary with configFile, its data in dataDir and its
// output in logPath, on a free loopback port and without clustering, and returns the process and
// its address (host:port, as Prometheus's alerting configuration names it). It does not wait until
// it is ready (CheckReady on /-/ready).
func StartAlertmanager(binary, configFile, dataDir, logPath string, log io.Writer) (*devkit.Process, string, error) {
	return startListening("alertmanager", binary, func(addr string) []string {
		return []string{
			"--config.file=" + configFile,
			"--storage.path=" + dataDir,
			"--web.listen-address=" + addr,
			"--cluster.listen-address=",
			"--log.level=info",
		}
	}, logPath, log)
}

// AlertNotice is one alert of a notification the receiver was sent.
type AlertNotice struct {
	// Status is "firing" or "resolved".
	Status string
	Labels map[string]string
}

// AlertReceiver is an Alertmanager webhook receiver on a loopback port: it keeps every alert of
// every notification it is sent. It is safe for concurrent use.
type AlertReceiver struct {
	server *httptest.Server
	mu     sync.Mutex
	notes  []AlertNotice
	bad    []string // requests it could not read
}

// StartAlertReceiver starts a receiver.
func StartAlertReceiver() *AlertReceiver {
	r := &AlertReceiver{}
	r.server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// serve reads one notification (Alertmanager's webhook payload, version 4).
func (r *AlertReceiver) serve(w http.ResponseWriter, req *http.Request) {
	var payload struct {
		Alerts []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	err := json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&payload)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.bad = append(r.bad, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, a := range payload.Alerts {
		r.notes = append(r.notes, AlertNotice{Status: a.Status, Labels: a.Labels})
	}
}

// URL is where Alertmanager sends its notifications.
func (r *AlertReceiver) URL() string { return r.server.URL + "/hook" }

// Notices returns every alert received so far, in order, and an error when a notification could
// not be read.
func (r *AlertReceiver) Notices() ([]AlertNotice, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if len(r.bad) > 0 {
		err = fmt.Errorf("%d notifications could not be read, the first: %s", len(r.bad), r.bad[0])
	}
	return append([]AlertNotice(nil), r.notes...), err
}

// Close stops the receiver.
func (r *AlertReceiver) Close() { r.server.Close() }
