package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
	"github.com/oaat-io/oaat-operator/internal/metrics"
)

// metricDoc is one metric as a scrape shows it.
type metricDoc struct {
	name, help, typ string
	labels          []string
	// buckets are a histogram's upper bounds, +Inf left out.
	buckets []float64
	// collector is the Go type of an operator's own collector, which computes the metric at
	// scrape time; "" for a metric the operator keeps (a counter or histogram it observes, by
	// client_golang's types or by a collector that says so with a method KeptByTheOperator).
	collector string
}

// registerOperatorMetrics registers the operator's metrics with reg as cmd/main.go does
// (metrics.Register, metrics.RegisterLocks, metrics.RegisterNotify), except that the collectors read a fixture instead of
// the manager's cache, and records one sample of each metric the operator keeps, so that a scrape
// shows every metric. main_test.go keeps the calls equal to those of cmd/main.go.
func registerOperatorMetrics(reg prometheus.Registerer) error {
	runs := metrics.NewRunMetrics()
	if err := metrics.Register(reg, runs, metrics.NewStatusCollector(fixtureReader{}, clock.RealClock{})); err != nil {
		return err
	}
	locks := metrics.NewLockMetrics()
	if err := metrics.RegisterLocks(reg, locks, metrics.NewLockCollector(fixtureReader{})); err != nil {
		return err
	}
	notifications := metrics.NewNotifyMetrics()
	if err := metrics.RegisterNotify(reg, notifications); err != nil {
		return err
	}
	notifications.Observe("cluster", true)
	notifications.Dropped("ns", "group", 1)
	runs.Observe("ns", "group", "item", "succeeded", time.Minute)
	runs.OnDemandRun("ns", "group", "succeeded")
	runs.RoundOverrun("ns", "group")
	runs.Probe("ns", "group", "failed")
	runs.HistoryLost("ns", history.LostRefused)
	locks.ObserveWait("ns", "lock", 0)
	return nil
}

// fixtureReader stands for the manager's cache: one OaatGroup whose item runs and has both
// succeeded and failed, and been verified, with runs enough to judge its newest, with a circuit breaker, a forecast and spec.verify (so
// that every status gauge has a series), one OaatLock and one
// ClusterOaatLock.
type fixtureReader struct{}

func (fixtureReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("the docgen fixture serves lists only")
}

func (fixtureReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	meta := metav1.ObjectMeta{Namespace: "ns", Name: "name", CreationTimestamp: metav1.Unix(0, 0)}
	now := metav1.Unix(3600, 0)
	switch l := list.(type) {
	case *v1alpha1.OaatGroupList:
		g := v1alpha1.OaatGroup{ObjectMeta: meta}
		g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "item", StartedAt: now}
		g.Spec.Verify = &v1alpha1.Verify{OaatType: "verify"}
		g.Status.Items = []v1alpha1.ItemStatus{{Name: "item", LastSuccess: &now, LastFailure: &now, FailureCount: 1,
			LastVerified: &now, VerifiedRunFinishedAt: &now, RecentRunSeconds: []int64{60, 60, 60, 30}}}
		g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed}
		g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionAtRisk, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonOnTime)}}
		l.Items = []v1alpha1.OaatGroup{g}
	case *v1alpha1.OaatLockList:
		l.Items = []v1alpha1.OaatLock{{ObjectMeta: meta, Spec: v1alpha1.OaatLockSpec{CircuitBreaker: v1alpha1.LockBreakerShared, Adaptive: &v1alpha1.AdaptiveCapacity{Max: 1}},
			Status: v1alpha1.OaatLockStatus{AdaptiveStatus: v1alpha1.AdaptiveStatus{Adaptive: &v1alpha1.AdaptiveCapacityStatus{Capacity: 1, CapacityInUse: 1}}}}}
	case *v1alpha1.ClusterOaatLockList:
		l.Items = []v1alpha1.ClusterOaatLock{{ObjectMeta: metav1.ObjectMeta{Name: "name"}}}
	default:
		return fmt.Errorf("the docgen fixture has no %T", list)
	}
	return nil
}

// recorder is the Registerer that register is given: it registers each collector with one
// pedantic registry, as the manager's registry would (a name registered twice fails), and
// remembers the collectors.
type recorder struct {
	reg        *prometheus.Registry
	collectors []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error {
	if err := r.reg.Register(c); err != nil {
		return err
	}
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *recorder) Unregister(c prometheus.Collector) bool {
	i := slices.Index(r.collectors, c)
	if i >= 0 {
		r.collectors = slices.Delete(r.collectors, i, i+1)
	}
	return r.reg.Unregister(c)
}

// collectMetrics runs register with a fresh registry and scrapes each collector it registered:
// every metric it describes must have a series (else the fixture lacks one, and the page would
// miss the metric). The metrics are sorted by name.
func collectMetrics(register func(prometheus.Registerer) error) ([]metricDoc, error) {
	rec := &recorder{reg: prometheus.NewPedanticRegistry()}
	if err := register(rec); err != nil {
		return nil, err
	}
	if _, err := rec.reg.Gather(); err != nil {
		return nil, err
	}
	var docs []metricDoc
	for _, c := range rec.collectors {
		descs := make(chan *prometheus.Desc, 64)
		go func() { c.Describe(descs); close(descs) }()
		var described []string
		for d := range descs {
			described = append(described, d.String())
		}
		one := prometheus.NewPedanticRegistry()
		if err := one.Register(c); err != nil {
			return nil, err
		}
		families, err := one.Gather()
		if err != nil {
			return nil, err
		}
		if len(families) != len(described) {
			return nil, fmt.Errorf("%T describes %d metrics but a scrape shows %d: the fixture of hack/docgen must give each a series\ndescribed:\n  %s\nscraped: %s",
				c, len(described), len(families), strings.Join(described, "\n  "), familyNames(families))
		}
		collector := ""
		_, kept := c.(interface{ KeptByTheOperator() })
		if t := reflect.TypeOf(c); !kept && !strings.HasPrefix(indirect(t).PkgPath(), "github.com/prometheus/") {
			collector = strings.TrimPrefix(t.String(), "*")
		}
		for _, f := range families {
			docs = append(docs, familyDoc(f, collector))
		}
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].name < docs[j].name })
	return docs, nil
}

func indirect(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

func familyNames(families []*dto.MetricFamily) string {
	names := make([]string, 0, len(families))
	for _, f := range families {
		names = append(names, f.GetName())
	}
	return strings.Join(names, ", ")
}

// familyDoc describes a scraped metric family: the union of its series' label names, sorted (as
// a scrape shows them), and a histogram's buckets.
func familyDoc(f *dto.MetricFamily, collector string) metricDoc {
	d := metricDoc{name: f.GetName(), help: f.GetHelp(), typ: strings.ToLower(f.GetType().String()), collector: collector}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if !slices.Contains(d.labels, l.GetName()) {
				d.labels = append(d.labels, l.GetName())
			}
		}
		if h := m.GetHistogram(); h != nil && d.buckets == nil {
			for _, b := range h.GetBucket() {
				d.buckets = append(d.buckets, b.GetUpperBound())
			}
		}
	}
	sort.Strings(d.labels)
	return d
}

// ruleFile is the part of a PrometheusRule that the page shows.
type ruleFile struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []rule `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	// group is the name of the rule group.
	group string
}

// parseAlerts reads the alerts of a PrometheusRule, sorted by name. A recording rule is refused:
// the page would not show it.
func parseAlerts(data []byte) (name string, alerts []rule, err error) {
	var f ruleFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return "", nil, err
	}
	// A field of a rule that the page does not show (keep_firing_for, say) must not be dropped
	// unnoticed.
	var raw struct {
		Spec struct {
			Groups []struct {
				Rules []map[string]any `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return "", nil, err
	}
	for _, g := range raw.Spec.Groups {
		for _, r := range g.Rules {
			for k := range r {
				if !slices.Contains([]string{"alert", "record", "expr", "for", "labels", "annotations"}, k) {
					return "", nil, fmt.Errorf("rule %v: docgen does not show its field %q", r["alert"], k)
				}
			}
		}
	}
	for _, g := range f.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				return "", nil, fmt.Errorf("group %s: a rule that is no alert (record %q): docgen does not show recording rules", g.Name, r.Record)
			}
			r.group = g.Name
			alerts = append(alerts, r)
		}
	}
	if len(alerts) == 0 {
		return "", nil, errors.New("the PrometheusRule has no alert")
	}
	sort.Slice(alerts, func(i, j int) bool { return alerts[i].Alert < alerts[j].Alert })
	return f.Metadata.Name, alerts, nil
}

// metricsPage is docs/reference/metrics.md: the metrics and the alerts of rulesPath.
func metricsPage(docs []metricDoc, rulesPath, ruleName string, alerts []rule) []byte {
	var b bytes.Buffer
	b.WriteString("# Metrics and alerts reference\n\n")
	fmt.Fprintf(&b, "<!-- Generated by `make api-docs` (hack/docgen) from the collectors of internal/metrics and %s: do not edit. -->\n\n", rulesPath)
	b.WriteString("What the metrics mean, example queries and the dashboard: [Metrics and alerts](../metrics-and-alerts.md);\n")
	b.WriteString("what to do when an alert fires: [Runbooks](../runbooks/README.md).\n\n")

	b.WriteString("## Metrics\n\n")
	b.WriteString("Every metric the manager registers (`metrics.Register`, `metrics.RegisterLocks` and `metrics.RegisterNotify` in\n")
	b.WriteString("`cmd/main.go`), as a scrape shows it: its type, its labels and its help text. The values of a\n")
	b.WriteString("metric computed at scrape time come from the collector named, which reads the manager's cache;\n")
	b.WriteString("the operator keeps the others in memory, as it observes them.\n\n")
	b.WriteString("| metric | type | labels | help | values |\n| --- | --- | --- | --- | --- |\n")
	for _, d := range docs {
		computed := "kept by the operator"
		if d.collector != "" {
			computed = "computed at scrape time by `" + d.collector + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.name, d.typ, codeList(d.labels), cell(d.help), computed)
	}
	b.WriteString("\n")
	var histograms []metricDoc
	for _, d := range docs {
		if d.buckets != nil {
			histograms = append(histograms, d)
		}
	}
	if len(histograms) > 0 {
		b.WriteString("### Histogram buckets\n\n")
		b.WriteString("The upper bounds (`le`) of each histogram's buckets, `+Inf` aside.\n\n")
		b.WriteString("| metric | buckets |\n| --- | --- |\n")
		for _, d := range histograms {
			bounds := make([]string, 0, len(d.buckets))
			for _, u := range d.buckets {
				bounds = append(bounds, strconv.FormatFloat(u, 'f', -1, 64))
			}
			fmt.Fprintf(&b, "| `%s` | %s |\n", d.name, strings.Join(bounds, ", "))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Alerts\n\n")
	fmt.Fprintf(&b, "The alerting rules of the PrometheusRule `%s` (`%s`).\n\n", ruleName, rulesPath)
	b.WriteString("| alert | group | severity | for | runbook |\n| --- | --- | --- | --- | --- |\n")
	for _, a := range alerts {
		fmt.Fprintf(&b, "| [%s](#%s) | `%s` | %s | %s | %s |\n", a.Alert, strings.ToLower(a.Alert), a.group,
			orNone(a.Labels["severity"]), orNone(a.For), runbook(a.Annotations["runbook_url"]))
	}
	b.WriteString("\n")
	for _, a := range alerts {
		fmt.Fprintf(&b, "### %s\n\n", a.Alert)
		if s := a.Annotations["summary"]; s != "" {
			fmt.Fprintf(&b, "Summary: %s\n\n", oneLine(s))
		}
		if s := a.Annotations["description"]; s != "" {
			fmt.Fprintf(&b, "Description: %s\n\n", oneLine(s))
		}
		var extra []string
		for _, k := range sortedKeys(a.Labels) {
			if k != "severity" {
				extra = append(extra, fmt.Sprintf("label `%s=%s`", k, a.Labels[k]))
			}
		}
		for _, k := range sortedKeys(a.Annotations) {
			if k != "summary" && k != "description" && k != "runbook_url" {
				extra = append(extra, "annotation `"+k+"`: "+oneLine(a.Annotations[k]))
			}
		}
		if len(extra) > 0 {
			fmt.Fprintf(&b, "Also: %s.\n\n", strings.Join(extra, "; "))
		}
		fmt.Fprintf(&b, "```promql\n%s\n```\n\n", strings.TrimSpace(a.Expr))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// runbook links a runbook by the last element of its URL.
func runbook(url string) string {
	if url == "" {
		return "none"
	}
	return fmt.Sprintf("[%s](%s)", path.Base(url), url)
}

func codeList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "`" + strings.Join(names, "`, `") + "`"
}

// cell makes text fit a table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// renderMetrics is the page of the operator's metrics and of the alerts of the PrometheusRule at
// rulesPath.
func renderMetrics(rulesPath string) ([]byte, error) {
	docs, err := collectMetrics(registerOperatorMetrics)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(rulesPath)
	if err != nil {
		return nil, err
	}
	name, alerts, err := parseAlerts(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rulesPath, err)
	}
	return metricsPage(docs, rulesPath, name, alerts), nil
}
