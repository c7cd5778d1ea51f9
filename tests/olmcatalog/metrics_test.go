//go:build olmcatalog

package olmcatalog

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The metrics Service and the scrapers' ClusterRole the bundle ships, as OLM creates them.
const (
	metricsService    = "oaat-operator-controller-manager-metrics-service"
	metricsReaderRole = "oaat-operator-metrics-reader"
)

// expectRunMetrics runs Debian's Prometheus against the metrics Service that OLM created from the
// bundle (its ready endpoints, one per replica, as a ServiceMonitor's scrape reaches a Service's
// endpoints: through the ClusterIP each scrape would reach either replica), with the token of a ServiceAccount bound to the bundle's metrics-reader ClusterRole,
// and checks that, per item of each watched group, the run counter and the run duration
// histogram match the item pods that ran: one count per pod, and a duration sum equal to the
// pods' run times (the container's end minus the pod's start, as the kubelet reports them, to the
// second of their precision).
func expectRunMetrics(ctx context.Context, m installMode) {
	GinkgoHelper()
	var targets []string
	Eventually(func(g Gomega) {
		var err error
		targets, err = support.ReadyEndpoints(ctx, k8sClient, m.InstallNamespace, metricsService)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(targets).To(HaveLen(managerReplicas), "ready endpoints of the bundle's metrics Service, as OLM created it")
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())

	scraper := support.Scraper{
		Namespace: m.InstallNamespace, ServiceAccount: "prometheus", ClusterRole: metricsReaderRole,
		Binding: "olmcatalog-prometheus-" + m.InstallNamespace,
	}
	DeferCleanup(func(ctx SpecContext) { Expect(scraper.Delete(ctx, clientset)).To(Succeed()) })
	token, err := scraper.Token(ctx, clientset)
	Expect(err).NotTo(HaveOccurred())

	binary, err := support.PrometheusBinary()
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(cluster.StateDir, "prometheus-"+m.InstallNamespace)
	Expect(os.RemoveAll(dir)).To(Succeed())
	logPath := filepath.Join(cluster.StateDir, "logs", "prometheus-"+m.InstallNamespace+".log")
	job := support.ScrapeJob{Name: metricsService, Targets: targets, Labels: map[string]string{"service": metricsService}}
	proc, baseURL, err := support.StartScrapingPrometheus(binary, dir, logPath, token, job, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	defer func() { Expect(proc.Stop(30 * time.Second)).To(Succeed()) }()

	want := podRuns(ctx, m.WorkNamespaces)
	Eventually(func(g Gomega) {
		g.Expect(proc.UnexpectedExit(20)).To(Succeed())
		up, err := support.QueryPrometheus(ctx, baseURL, fmt.Sprintf(`up{job=%q} == 1`, metricsService))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(up).To(HaveLen(len(targets)), "Prometheus has not scraped every replica of %v", targets)
		for key, runs := range want {
			// The leader counts the runs; a standby exports none. Summed over the replicas, as a
			// dashboard does across a failover.
			sel := fmt.Sprintf(`{job=%q,namespace=%q,group=%q,item=%q,result="succeeded"}`, metricsService, key.namespace, groupName, key.item)
			g.Expect(queryValue(ctx, g, baseURL, "sum(oaat_item_runs_total"+sel+")")).To(BeNumerically("==", len(runs)), "runs of %v", key)
			g.Expect(queryValue(ctx, g, baseURL, "sum(oaat_item_run_duration_seconds_count"+sel+")")).To(BeNumerically("==", len(runs)), "durations observed for %v", key)
			var sum float64
			for _, d := range runs {
				sum += d.Seconds()
			}
			// Each pod time is whole seconds; the operator bounds a duration by its own clock too.
			g.Expect(queryValue(ctx, g, baseURL, "sum(oaat_item_run_duration_seconds_sum"+sel+")")).To(BeNumerically("~", sum, float64(len(runs))),
				"duration sum of %v; the pods' run times: %v", key, runs)
		}
	}).WithContext(ctx).WithTimeout(90*time.Second).WithPolling(time.Second).Should(Succeed(),
		"Prometheus through Service %s/%s; its log: %s", m.InstallNamespace, metricsService, logPath)
	AddReportEntry(m.Name+": run metrics scraped", fmt.Sprintf("%d items through %v", len(want), targets))
}

// itemKey names an item of the group in a namespace.
type itemKey struct{ namespace, item string }

// podRuns returns the run time of every succeeded item pod of the group, by item: the end of its
// container minus the pod's start.
func podRuns(ctx context.Context, namespaces []string) map[itemKey][]time.Duration {
	GinkgoHelper()
	runs := map[itemKey][]time.Duration{}
	for _, ns := range namespaces {
		pods, err := clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelGroup + "=" + groupName})
		Expect(err).NotTo(HaveOccurred())
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodSucceeded {
				continue
			}
			Expect(p.Status.StartTime).NotTo(BeNil(), "pod %s/%s", ns, p.Name)
			Expect(p.Status.ContainerStatuses).To(HaveLen(1), "pod %s/%s", ns, p.Name)
			term := p.Status.ContainerStatuses[0].State.Terminated
			Expect(term).NotTo(BeNil(), "pod %s/%s", ns, p.Name)
			key := itemKey{ns, p.Annotations[v1alpha1.AnnotationItem]}
			runs[key] = append(runs[key], term.FinishedAt.Sub(p.Status.StartTime.Time))
		}
	}
	Expect(runs).To(HaveLen(len(namespaces)*len(items)), "succeeded pods by item: %v", runs)
	return runs
}

// queryValue returns the value of the query's only series.
func queryValue(ctx context.Context, g Gomega, baseURL, query string) float64 {
	samples, err := support.QueryPrometheus(ctx, baseURL, query)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(samples).To(HaveLen(1), "series of %s", query)
	if len(samples) == 0 {
		return math.NaN()
	}
	return samples[0].Value
}
