//go:build olmcatalog

package olmcatalog

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// second of their precision). In the page's namespace the scraper is docs/olm.md's: the
// ServiceAccount prometheus of the namespace monitoring, bound as the page binds it. It returns
// the pods' run times, by item.
func expectRunMetrics(ctx context.Context, m installMode) map[itemKey][]time.Duration {
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
	if m.InstallNamespace == pageNamespace {
		// The page's previous block (checked-by: tests/e2e metrics-binding) binds this one.
		scraper.Namespace, scraper.Binding = pageMonitoringNamespace, "prometheus-oaat-metrics"
		createNamespace(ctx, pageMonitoringNamespace)
		DeferCleanup(func(ctx SpecContext) { deleteNamespaces(ctx, pageMonitoringNamespace) })
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
	return want
}

// pageMonitoringNamespace is the namespace of the Prometheus of docs/olm.md.
const pageMonitoringNamespace = "monitoring"

// runsTotalRE is a sample of the run counter in the text format of /metrics: its labels, its value.
var runsTotalRE = regexp.MustCompile(`(?m)^oaat_item_runs_total\{([^}]*)\} (\S+)$`)

// labelRE is one label of a sample.
var labelRE = regexp.MustCompile(`(\w+)="([^"]*)"`)

// expectLeaderMetrics runs docs/olm.md's scrape of the leader's metrics (marked checked-by:
// tests/olmcatalog metrics-scrape: a token of the ServiceAccount prometheus of monitoring, a
// port-forward to the pod the Lease names, curl) and checks that what it prints counts, for each
// item, the succeeded runs of want (the item pods): the leader has counted every run, no failover
// having happened since the install. The Lease is read again after the block, so that a change of
// leader during it fails with its name rather than as a miscount.
func expectLeaderMetrics(ctx context.Context, want map[itemKey][]time.Duration) {
	GinkgoHelper()
	leader := func() string {
		lease := &coordinationv1.Lease{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: pageNamespace, Name: v1alpha1.LeaderElectionID}, lease)).To(Succeed())
		return ptr.Deref(lease.Spec.HolderIdentity, "")
	}
	before := leader()
	out := runDocBlocks(ctx, "metrics-scrape")
	Expect(leader()).To(Equal(before), "the leader changed while the page's commands scraped it")

	got := map[itemKey]string{}
	for _, m := range runsTotalRE.FindAllStringSubmatch(out, -1) {
		labels := map[string]string{}
		for _, l := range labelRE.FindAllStringSubmatch(m[1], -1) {
			labels[l[1]] = l[2]
		}
		Expect(labels).To(HaveKeyWithValue("group", groupName), "a run counter of another group: %s", m[0])
		Expect(labels).To(HaveKeyWithValue("result", "succeeded"), "%s", m[0])
		got[itemKey{labels["namespace"], labels["item"]}] = m[2]
	}
	Expect(got).To(HaveLen(len(want)), "the leader's run counters in what the page's commands printed:\n%s", out)
	for key, runs := range want {
		Expect(got).To(HaveKeyWithValue(key, strconv.Itoa(len(runs))), "the leader's run counter of %v", key)
	}
	for _, series := range []string{"oaat_item_run_duration_seconds_bucket{", "oaat_item_run_duration_seconds_sum{", "oaat_item_run_duration_seconds_count{"} {
		Expect(out).To(ContainSubstring(series), "the run duration histogram in what the page's commands printed")
	}
	AddReportEntry("docs/olm.md: the leader's run metrics through a port-forward", fmt.Sprintf("%d items from %s", len(got), before))
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
