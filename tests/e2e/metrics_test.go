//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("Metrics", Serial, func() {
	BeforeEach(func(ctx SpecContext) {
		start := time.Now()
		prom.waitForTarget(ctx)
		GinkgoWriter.Printf("Prometheus scrapes the operator (waited %s)\n", time.Since(start).Round(time.Millisecond))
	})

	It("serves /metrics over HTTPS only to a token allowed to get it", func(ctx SpecContext) {
		By("scraping without a token")
		resp, body, err := scrapeOperator(ctx, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.TLS).NotTo(BeNil(), "the metrics are served over HTTPS")
		Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized), "no token: %s", body)
		Expect(body).NotTo(ContainSubstring("oaat_"))

		By("scraping with a token of " + monitoringNamespace + "/" + unprivilegedSA + ", which may not get /metrics")
		resp, body, err = scrapeOperator(ctx, mintToken(ctx, monitoringNamespace, unprivilegedSA))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusForbidden), "a token without the metrics-reader role: %s", body)
		Expect(body).To(ContainSubstring("system:serviceaccount:" + monitoringNamespace + ":" + unprivilegedSA))
		Expect(body).NotTo(ContainSubstring("oaat_"))

		By("scraping with a token of " + monitoringNamespace + "/" + prometheusSA + ", bound to " + metricsReaderRole)
		resp, body, err = scrapeOperator(ctx, mintToken(ctx, monitoringNamespace, prometheusSA))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusOK), "a token with the metrics-reader role: %s", body)
		Expect(resp.Header.Get("Content-Type")).To(HavePrefix("text/plain"))
		Expect(body).To(ContainSubstring("controller_runtime_reconcile_total"))

		By("speaking plain HTTP to the HTTPS endpoint")
		plain := strings.Replace(operator.metricsURL(), "https://", "http://", 1)
		c := http.Client{Timeout: 5 * time.Second}
		plainResp, err := c.Get(plain)
		Expect(err).NotTo(HaveOccurred())
		plainResp.Body.Close()
		Expect(plainResp.StatusCode).To(Equal(http.StatusBadRequest), "plain HTTP is refused")
	}, SpecTimeout(time.Minute))

	// An operator bug (through controller-runtime's filters.WithAuthenticationAndAuthorization, which
	// cmd/main.go uses): when the TokenReview says a token is not authenticated and gives a reason
	// (status.error: "invalid bearer token" for a token the API server cannot read, "service
	// account ... has been deleted" for the token of a deleted ServiceAccount), the filter takes it
	// for a failure of the review itself, answers 500 Internal Server Error and logs an error with a
	// stack trace on every such request. The API server, and kube-rbac-proxy that the filter replaces,
	// answer 401 Unauthorized: a client with a wrong, expired or revoked token is refused, not told the
	// server is broken.
	It("refuses a token the API server rejects with 401 Unauthorized, not 500", func(ctx SpecContext) {
		By("minting a token of a ServiceAccount, then deleting the ServiceAccount")
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "revoked", Namespace: ns}}
		create(ctx, sa)
		revoked := mintToken(ctx, ns, sa.Name)
		Expect(k8sClient.Delete(ctx, sa)).To(Succeed())
		Eventually(func(g Gomega) {
			review, err := clientset.AuthenticationV1().TokenReviews().Create(ctx,
				&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: revoked}}, metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(review.Status.Authenticated).To(BeFalse(), "the token of the deleted ServiceAccount still authenticates")
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed()) // the API server's cache of the ServiceAccount

		tokens := map[string]string{
			"a token the API server cannot read":    "not-a-token",
			"the token of a deleted ServiceAccount": revoked,
		}
		got, want := map[string]int{}, map[string]int{}
		for what, token := range tokens {
			resp, body, err := scrapeOperator(ctx, token)
			Expect(err).NotTo(HaveOccurred())
			Expect(body).NotTo(ContainSubstring("oaat_"), "%s got the metrics", what)
			got[what], want[what] = resp.StatusCode, http.StatusUnauthorized
		}
		Expect(got).To(Equal(want), "HTTP status of the operator's /metrics for each rejected token")
	}, SpecTimeout(time.Minute))

	It("shows in Prometheus what the groups' status says", func(ctx SpecContext) {
		const (
			succeeding = "fine"
			failing    = "broken"
		)
		items := []string{"alpha", "beta"}
		results := map[string]string{succeeding: "succeeded", failing: "failed"}
		failingGroup := newGroup(failing, "bad", items...)
		failingGroup.Spec.FailureCoolOff = "1h" // each item fails once, then waits an hour
		create(ctx, newOaatType("ok", "2s", 0), newOaatType("bad", "2s", 1),
			newGroup(succeeding, "ok", items...), failingGroup)

		By("waiting until every item of both groups has run")
		groups := map[string]*v1alpha1.OaatGroup{}
		Eventually(func(g Gomega) {
			for _, name := range []string{succeeding, failing} {
				group := getGroup(ctx, g, name)
				g.Expect(group.Status.CurrentRun).To(BeNil(), "group %s runs", name)
				for _, item := range items {
					it := itemStatus(group, item)
					g.Expect(it).NotTo(BeNil(), "status of %s/%s", name, item)
					g.Expect(it.LastStarted).NotTo(BeNil(), "%s/%s has not run", name, item)
					g.Expect(it.LastSuccess != nil || it.LastFailure != nil).To(BeTrue(), "%s/%s has no outcome", name, item)
				}
				groups[name] = group
			}
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())

		By("reading what the cluster says: status, finished pods and outcome events")
		// Keyed by group/item/result, as the run metrics are.
		wantRuns := map[string]float64{}
		wantDuration := map[string]float64{}
		Eventually(func(g Gomega) {
			for name, group := range groups {
				for _, item := range items {
					it := itemStatus(group, item)
					if name == succeeding {
						g.Expect(it.LastSuccess).NotTo(BeNil())
						g.Expect(it.LastFailure).To(BeNil())
						g.Expect(it.FailureCount).To(BeZero())
					} else {
						g.Expect(it.LastFailure).NotTo(BeNil())
						g.Expect(it.LastSuccess).To(BeNil())
						g.Expect(it.FailureCount).To(BeEquivalentTo(1))
					}
					pods := finishedPodsOf(ctx, g, name, item)
					g.Expect(podNames(pods)).To(ConsistOf(it.LastPodName),
						"the group keeps the latest finished pod of %s/%s, and the item ran once", name, item)
					pod := pods[0]
					wantPhase := map[string]corev1.PodPhase{succeeding: corev1.PodSucceeded, failing: corev1.PodFailed}[name]
					g.Expect(pod.Status.Phase).To(Equal(wantPhase), "pod %s", pod.Name)
					succeeded, failed := itemOutcomeRecords(ctx, g, name, item)
					if name == succeeding {
						g.Expect([]int{succeeded, failed}).To(Equal([]int{1, 0}), "RunSucceeded and RunFailed events of %s/%s", name, item)
					} else {
						g.Expect([]int{succeeded, failed}).To(Equal([]int{0, 1}), "RunSucceeded and RunFailed events of %s/%s", name, item)
					}
					key := runKey(name, item, results[name])
					wantRuns[key] = float64(len(pods))
					wantDuration[key] = podRunSeconds(g, &pod)
				}
			}
		}).WithContext(ctx).WithTimeout(15 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("Runs per group/item/result: %v; durations from the pods: %v\n", wantRuns, wantDuration)

		By("querying Prometheus until its last scrape shows the same")
		sel := `{namespace="` + ns + `"}`
		Eventually(func(g Gomega) {
			expectTargetUp(ctx, g)
			g.Expect(byRun(promQuery(ctx, g, "oaat_item_runs_total"+sel))).To(Equal(wantRuns), "oaat_item_runs_total")
			g.Expect(byRun(promQuery(ctx, g, "oaat_item_run_duration_seconds_count"+sel))).To(Equal(wantRuns),
				"oaat_item_run_duration_seconds_count")
			sums := byRun(promQuery(ctx, g, "oaat_item_run_duration_seconds_sum"+sel))
			g.Expect(sums).To(HaveLen(len(wantDuration)), "oaat_item_run_duration_seconds_sum: %v", sums)
			for key, want := range wantDuration {
				g.Expect(sums).To(HaveKey(key), "oaat_item_run_duration_seconds_sum")
				g.Expect(sums[key]).To(BeNumerically("~", want, 1.0),
					"oaat_item_run_duration_seconds_sum of %s: the pod ran %.0f s from its startTime to its container's finishedAt", key, want)
			}

			wantFailures := map[string]float64{}
			wantLastSuccess := map[string]float64{}
			wantLastFailure := map[string]float64{}
			wantOverdue := map[string]float64{}
			for name, group := range groups {
				for _, it := range group.Status.Items {
					key := name + "/" + it.Name
					wantFailures[key] = float64(it.FailureCount)
					wantOverdue[key] = 0
					if it.LastSuccess != nil {
						wantLastSuccess[key] = float64(it.LastSuccess.Unix())
					}
					if it.LastFailure != nil {
						wantLastFailure[key] = float64(it.LastFailure.Unix())
					}
				}
			}
			g.Expect(byItem(promQuery(ctx, g, "oaat_item_failures_since_success"+sel))).To(Equal(wantFailures),
				"oaat_item_failures_since_success against status failureCount")
			g.Expect(byItem(promQuery(ctx, g, "oaat_item_last_success_timestamp_seconds"+sel))).To(Equal(wantLastSuccess),
				"oaat_item_last_success_timestamp_seconds against status lastSuccess")
			g.Expect(byItem(promQuery(ctx, g, "oaat_item_last_failure_timestamp_seconds"+sel))).To(Equal(wantLastFailure),
				"oaat_item_last_failure_timestamp_seconds against status lastFailure")
			g.Expect(byItem(promQuery(ctx, g, "oaat_item_overdue_seconds"+sel))).To(Equal(wantOverdue),
				"oaat_item_overdue_seconds: every item ran within its frequency")
			g.Expect(promQuery(ctx, g, "oaat_item_running_seconds"+sel)).To(BeEmpty(), "oaat_item_running_seconds while idle")
			g.Expect(byGroup(promQuery(ctx, g, "oaat_group_running"+sel))).To(Equal(map[string]float64{succeeding: 0, failing: 0}),
				"oaat_group_running once idle")
			g.Expect(byGroup(promQuery(ctx, g, "oaat_group_frequency_seconds"+sel))).To(Equal(map[string]float64{succeeding: 3600, failing: 3600}),
				"oaat_group_frequency_seconds of frequency 1h")
		}).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())

		By("deleting group " + failing + ": its gauges go stale in Prometheus")
		deleteGroup(ctx, failing)
		Eventually(func() bool {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: failing}, &v1alpha1.OaatGroup{})
			return apierrors.IsNotFound(err)
		}).WithContext(ctx).WithTimeout(30*time.Second).Should(BeTrue(), "group %s is gone", failing)
		deleted := `{namespace="` + ns + `",group="` + failing + `"}`
		Eventually(func(g Gomega) {
			// The target is still scraped and the other group still reported, so that the series
			// are gone because the operator stopped exporting them, not because the scrape failed.
			expectTargetUp(ctx, g)
			g.Expect(byGroup(promQuery(ctx, g, `oaat_group_running{namespace="`+ns+`",group="`+succeeding+`"}`))).To(
				Equal(map[string]float64{succeeding: 0}), "the remaining group %s", succeeding)
			g.Expect(promQuery(ctx, g, "oaat_group_running"+deleted)).To(BeEmpty(), "oaat_group_running of the deleted group")
			g.Expect(promQuery(ctx, g, `{__name__=~"`+strings.Join(statusGauges, "|")+`",namespace="`+ns+`",group="`+failing+`"}`)).To(
				BeEmpty(), "gauges of the deleted group")
		}).WithContext(ctx).WithTimeout(15 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		// Not asserted: the README promises no stale series for the gauges only. The run counters of
		// a deleted group stay in the operator's registry until it restarts.
		GinkgoWriter.Printf("Run counters of the deleted group still exported: %v\n",
			byRun(promQuery(ctx, Default, "oaat_item_runs_total"+deleted)))
	}, SpecTimeout(2*time.Minute))
})

// statusGauges are the metrics the operator computes from the groups' status at scrape time.
var statusGauges = []string{
	"oaat_group_running", "oaat_group_frequency_seconds", "oaat_item_failures_since_success",
	"oaat_item_last_success_timestamp_seconds", "oaat_item_last_failure_timestamp_seconds",
	"oaat_item_overdue_seconds", "oaat_item_running_seconds",
}

func runKey(group, item, result string) string { return group + "/" + item + "/" + result }

// byRun indexes samples by group/item/result.
func byRun(samples []promSample) map[string]float64 {
	return index(samples, func(m map[string]string) string { return runKey(m["group"], m["item"], m["result"]) })
}

// byResult indexes samples by result.
func byResult(samples []promSample) map[string]float64 {
	return index(samples, func(m map[string]string) string { return m["result"] })
}

// byItem indexes samples by group/item.
func byItem(samples []promSample) map[string]float64 {
	return index(samples, func(m map[string]string) string { return m["group"] + "/" + m["item"] })
}

// byGroup indexes samples by group.
func byGroup(samples []promSample) map[string]float64 {
	return index(samples, func(m map[string]string) string { return m["group"] })
}

// index maps each sample's key to its value; a key seen twice (two series that differ by another
// label) maps to NaN, which equals nothing, so that the comparison fails and shows it.
func index(samples []promSample, key func(map[string]string) string) map[string]float64 {
	out := make(map[string]float64, len(samples))
	for _, s := range samples {
		k := key(s.Metric)
		if _, dup := out[k]; dup {
			out[k] = math.NaN()
			continue
		}
		out[k] = s.Value
	}
	return out
}

// finishedPodsOf lists the group's terminal pods of the item.
func finishedPodsOf(ctx context.Context, g Gomega, group, item string) []corev1.Pod {
	var found []corev1.Pod
	for _, p := range podsOf(ctx, g, group) {
		if p.Annotations[v1alpha1.AnnotationItem] == item && isTerminal(&p) {
			found = append(found, p)
		}
	}
	return found
}

// podRunSeconds is how long the pod ran: from its status.startTime to the latest finishedAt of its
// containers.
func podRunSeconds(g Gomega, pod *corev1.Pod) float64 {
	g.Expect(pod.Status.StartTime).NotTo(BeNil(), "startTime of pod %s", pod.Name)
	var finished time.Time
	for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(finished) {
			finished = t.FinishedAt.Time
		}
	}
	g.Expect(finished.IsZero()).To(BeFalse(), "no terminated container in pod %s", pod.Name)
	return finished.Sub(pod.Status.StartTime.Time).Seconds()
}

// itemOutcomeRecords counts the RunSucceeded and RunFailed events about the group's item, each
// event counted as often as its series says it happened.
func itemOutcomeRecords(ctx context.Context, g Gomega, group, item string) (succeeded, failed int) {
	prefix := fmt.Sprintf("Item %q ", item)
	return countOutcomes(ctx, g, group, func(note string) bool { return strings.HasPrefix(note, prefix) })
}
