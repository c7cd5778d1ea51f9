//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// dashboardFile is the Grafana dashboard shipped in config/grafana.
const dashboardFile = "../../config/grafana/oaat-operator.json"

// dashboard is what the test reads of a Grafana dashboard: its panels' queries.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Type    string `json:"type"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

var _ = Describe("The Grafana dashboard and the runbooks", Serial, func() {
	BeforeEach(func(ctx SpecContext) {
		prom.waitForTarget(ctx)
	})

	It("answer every query against Prometheus scraping the operator, with data where runs happened", func(ctx SpecContext) {
		By("running three groups: one whose items succeed, one whose item fails and is overdue, one whose item runs on")
		// Overdue 10 s after it was created: it fails, then cools off for an hour.
		failing := support.Group(ns, "dash-failing", "dash-bad", "a").Frequency("10s").FailureCoolOff("1h").Obj()
		// The succeeding and the running group share a lock, so that the lock panels have data.
		succeeding := support.Group(ns, "dash-succeeding", "dash-ok", "a", "b").Locks("dash-lock").Obj()
		succeeding.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{} // closed all along: the breaker panel's series is 0
		running := support.Group(ns, "dash-running", "dash-slow", "a").Locks("dash-lock").Obj()
		create(ctx, support.Lock(ns, "dash-lock", 2),
			newOaatType("dash-ok", "2s", 0), newOaatType("dash-bad", "2s", 1), newOaatType("dash-slow", "10m", 0),
			succeeding, failing, running)
		Eventually(func(g Gomega) {
			g.Expect(itemStatus(getGroup(ctx, g, "dash-succeeding"), "b")).To(HaveField("LastSuccess", Not(BeNil())))
			g.Expect(itemStatus(getGroup(ctx, g, "dash-failing"), "a")).To(HaveField("LastFailure", Not(BeNil())))
			g.Expect(getGroup(ctx, g, "dash-running").Status.CurrentRun).NotTo(BeNil())
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())

		data, err := os.ReadFile(dashboardFile)
		Expect(err).NotTo(HaveOccurred())
		var d dashboard
		Expect(json.Unmarshal(data, &d)).To(Succeed(), dashboardFile)
		// Grafana's variables as a user viewing these groups sets them: the namespace, every group
		// (the "All" value, a regular expression), a rate interval that spans the runs.
		vars := strings.NewReplacer("$namespace", ns, "$group", "dash-.*", "$__rate_interval", "10m")
		queries := 0
		for _, p := range d.Panels {
			if p.Type == "row" {
				continue
			}
			Expect(p.Targets).NotTo(BeEmpty(), "panel %q has no query", p.Title)
			for _, t := range p.Targets {
				expr := vars.Replace(t.Expr)
				Expect(expr).NotTo(ContainSubstring("$"), "panel %q: a variable the test does not set", p.Title)
				queries++
				Eventually(func(g Gomega) {
					samples, err := support.QueryPrometheus(ctx, prom.url(""), expr)
					g.Expect(err).NotTo(HaveOccurred(), "panel %q", p.Title)
					g.Expect(samples).NotTo(BeEmpty(), "panel %q: %s", p.Title, expr)
				}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
			}
		}
		GinkgoWriter.Printf("%d queries of %d panels answered\n", queries, len(d.Panels))

		By("running every PromQL block of docs/runbooks: each must parse and evaluate")
		pages, err := filepath.Glob("../../docs/runbooks/*.md")
		Expect(err).NotTo(HaveOccurred())
		blocks := 0
		for _, page := range pages {
			text, err := os.ReadFile(page)
			Expect(err).NotTo(HaveOccurred())
			for _, m := range promqlBlock.FindAllStringSubmatch(string(text), -1) {
				for _, q := range strings.Split(strings.TrimSpace(m[1]), "\n") {
					blocks++
					_, err := support.QueryPrometheus(ctx, prom.url(""), q)
					Expect(err).NotTo(HaveOccurred(), "%s: %s", filepath.Base(page), q)
				}
			}
		}
		Expect(blocks).To(BeNumerically(">=", len(pages)-1), "PromQL queries in %d runbooks", len(pages))
	}, SpecTimeout(3*time.Minute))
})

// promqlBlock matches a fenced PromQL block of a Markdown page; each of its lines is a query.
var promqlBlock = regexp.MustCompile("(?s)```promql\n(.*?)```")
