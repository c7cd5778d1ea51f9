//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The alerting path from a failing item to a person: the bundle's PrometheusRule evaluated by the
// suite's Prometheus, which sends its alerts to a real Alertmanager configured with the route
// docs/metrics-and-alerts.md gives, which notifies a webhook receiver. Every time of the path is
// divided by support.AlertScale; nothing else changes.

// alertPath is the part of the alerting path the first process runs beside Prometheus.
type alertPath struct {
	// receiver stands for the person: a webhook receiver keeping every notification.
	receiver *support.AlertReceiver
	proc     *devkit.Process
	logPath  string
}

// alerts is the first process's alerting path; nil on the other processes (the alerting specs are
// Serial: they run on the first).
var alerts *alertPath

// startAlerting writes the bundle's rules, scaled, into dir, starts the receiver and an
// Alertmanager with the docs' route (alerts, set before the process starts so that the teardown
// stops it whatever fails after), waits until Alertmanager is ready, and returns what Prometheus
// alerts with.
func startAlerting(ctx context.Context, dir string) support.Alerting {
	GinkgoHelper()
	binary, err := support.AlertmanagerBinary()
	Expect(err).NotTo(HaveOccurred())
	manifest, err := os.ReadFile(filepath.Join(paths.repoRoot, "config", "prometheus", "alerts.yaml"))
	Expect(err).NotTo(HaveOccurred())
	rules, err := support.ScaleRules(manifest, support.AlertScale)
	Expect(err).NotTo(HaveOccurred())
	ruleFile := filepath.Join(dir, "rules.yaml")
	Expect(os.WriteFile(ruleFile, rules, 0o644)).To(Succeed())

	blocks, err := support.CheckedBlocks(paths.repoRoot, "tests/e2e", "alertmanager-route")
	Expect(err).NotTo(HaveOccurred())
	Expect(blocks).To(HaveLen(1), "the one Alertmanager route of the docs")
	a := &alertPath{receiver: support.StartAlertReceiver(), logPath: filepath.Join(cluster.StateDir, "logs", "alertmanager.log")}
	alerts = a
	config, err := support.AlertmanagerConfig([]byte(blocks[0].Text), support.AlertScale, a.receiver.URL())
	Expect(err).NotTo(HaveOccurred(), "the Alertmanager route of %s", blocks[0].Where())
	configFile := filepath.Join(dir, "alertmanager.yml")
	Expect(os.WriteFile(configFile, config, 0o644)).To(Succeed())
	// A fresh state each run, and one log: no notification of an earlier run is pending.
	dataDir := filepath.Join(dir, "alertmanager")
	Expect(os.RemoveAll(dataDir)).To(Succeed())
	Expect(os.Remove(a.logPath)).To(Or(Succeed(), MatchError(os.ErrNotExist)))
	proc, addr, err := support.StartAlertmanager(binary, configFile, dataDir, a.logPath, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	a.proc = proc
	Eventually(func() error {
		if err := proc.UnexpectedExit(20); err != nil {
			return StopTrying("Alertmanager exited while starting").Wrap(err)
		}
		return devkit.CheckReady(ctx, "http://"+addr+"/-/ready", 2*time.Second)
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "Alertmanager's /-/ready; log %s", a.logPath)
	GinkgoWriter.Printf("Alertmanager, pid %d, on %s, notifying %s\n", proc.PID(), addr, a.receiver.URL())
	return support.Alerting{RuleFile: ruleFile, Alertmanager: addr}
}

// pid is Alertmanager's pid, 0 when it was never started.
func (a *alertPath) pid() int {
	if a == nil || a.proc == nil {
		return 0
	}
	return a.proc.PID()
}

// stop stops Alertmanager and the receiver.
func (a *alertPath) stop() error {
	if a == nil {
		return nil
	}
	a.receiver.Close()
	if a.proc == nil {
		return nil
	}
	return a.proc.Stop(30 * time.Second)
}

// notified is an alert the receiver must be sent: its name, group and item ("" for a group's
// alert).
type notified struct{ alert, group, item string }

// expectNotified checks that the receiver got each alert, in the test's namespace, with the status.
func expectNotified(g Gomega, status string, want ...notified) {
	notices, err := alerts.receiver.Notices()
	g.Expect(err).NotTo(HaveOccurred())
	for _, w := range want {
		found := false
		for _, n := range notices {
			l := n.Labels
			if n.Status == status && l["alertname"] == w.alert && l["namespace"] == ns && l["group"] == w.group && l["item"] == w.item {
				found = true
			}
		}
		g.Expect(found).To(BeTrue(), "no %s notification of %s for %s/%s item %q; log %s", status, w.alert, ns, w.group, w.item, alerts.logPath)
	}
}

var _ = Describe("Alerts through Alertmanager", Serial, func() {
	It("reach the receiver of the docs' route when an item keeps failing and goes overdue and a breaker opens, and resolve once fixed", func(ctx SpecContext) {
		Expect(alerts).NotTo(BeNil(), "a Serial spec runs on the first process, which holds the alerting path")
		// An item that fails every run, due every 5s: OaatItemFailingRepeatedly (3 failures, for
		// 10s) and OaatItemOverdue (over 2 × 5s past due, for 15s).
		failing := newGroup("alert-failing", "alert-failing", "x")
		failing.Spec.Frequency = "5s"
		failing.Spec.FailureCoolOff = "1s"
		// A target that is down: the breaker opens after 2 items, OaatCircuitBreakerOpen (for 15s).
		breaker := newGroup("alert-breaker", "alert-target", "a", "b")
		breaker.Spec.FailureCoolOff = "1h"
		breaker.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{
			ConsecutiveItemFailures: 2, ExitCodes: []int32{75}, ProbeInterval: "2s", MaxProbeInterval: "4s",
		}
		create(ctx, newOaatType("alert-failing", "1s", 1), newOaatType("alert-target", "1s", 75), failing, breaker)
		want := []notified{
			{"OaatItemFailingRepeatedly", "alert-failing", "x"},
			{"OaatItemOverdue", "alert-failing", "x"},
			{"OaatCircuitBreakerOpen", "alert-breaker", ""},
		}

		By("each alert reaching the receiver, firing")
		start := time.Now()
		Eventually(func(g Gomega) { expectNotified(g, "firing", want...) }).
			WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("all three alerts notified firing after %s\n", time.Since(start).Round(time.Second))

		By("fixing the item and the target: each alert reaching the receiver again, resolved")
		fixed := time.Now()
		for _, t := range []string{"alert-failing", "alert-target"} {
			updateType(ctx, t, func(t *v1alpha1.OaatType) { t.Spec.Template.Annotations[annotationTestExitCode] = "0" })
		}
		Eventually(func(g Gomega) { expectNotified(g, "resolved", want...) }).
			WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("all three alerts notified resolved %s after the fix\n", time.Since(fixed).Round(time.Second))
		Expect(alerts.proc.UnexpectedExit(20)).To(Not(HaveOccurred()), "Alertmanager; log %s", alerts.logPath)
	})
})

var _ = Describe("The unusual-run alert through Alertmanager", Serial, func() {
	It("reaches the receiver when an item's run takes a fiftieth of its usual time (OaatItemRunTooShort)", func(ctx SpecContext) {
		Expect(alerts).NotTo(BeNil(), "a Serial spec runs on the first process, which holds the alerting path")
		// Runs of 10 s, one after the other: after three, the item has a baseline (a median of 10 s).
		short := newGroup("alert-short", "alert-short", "x")
		short.Spec.Frequency = "1s"
		create(ctx, newOaatType("alert-short", "10s", 0), short)
		By("keeping three runs of 10 s")
		Eventually(func(g Gomega) {
			g.Expect(itemOf(g, getGroup(ctx, g, "alert-short"), "x").RecentRunSeconds).To(HaveLen(3))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		Expect(itemOf(Default, getGroup(ctx, Default, "alert-short"), "x").RecentRunSeconds).To(HaveEach(BeNumerically("~", 10, 1)))

		By("running the item once more in 200 ms: 50 times faster than its median")
		updateGroup(ctx, "alert-short", func(g *v1alpha1.OaatGroup) { g.Spec.Frequency = "1h" })
		updateType(ctx, "alert-short", func(t *v1alpha1.OaatType) { t.Spec.Template.Annotations[annotationTestDuration] = "200ms" })
		Eventually(func(g Gomega) {
			grp := getGroup(ctx, g, "alert-short")
			g.Expect(grp.Status.CurrentRun).To(BeNil(), "the run of 10 s under way when the spec changed has ended")
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		create(ctx, support.Run(ns, "alert-short-fast", "alert-short", "x"))
		Eventually(func(g Gomega) {
			recent := itemOf(g, getGroup(ctx, g, "alert-short"), "x").RecentRunSeconds
			g.Expect(recent).NotTo(BeEmpty())
			g.Expect(recent[len(recent)-1]).To(BeZero(), "the fast run, kept as 0 s")
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())

		By("the alert reaching the receiver, firing")
		start := time.Now()
		Eventually(func(g Gomega) { expectNotified(g, "firing", notified{"OaatItemRunTooShort", "alert-short", "x"}) }).
			WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("OaatItemRunTooShort notified firing %s after the fast run was recorded\n", time.Since(start).Round(time.Second))
		Expect(alerts.proc.UnexpectedExit(20)).To(Not(HaveOccurred()), "Alertmanager; log %s", alerts.logPath)
	})
})
