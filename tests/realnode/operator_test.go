//go:build realnode

package realnode

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The scraper's identity: a ServiceAccount bound to the ClusterRole config/rbac grants scrapers.
const (
	monitoringNamespace = "monitoring"
	scraperSA           = "prometheus"
	metricsReaderRole   = "oaat-operator-metrics-reader"
)

// waitForOperator waits until every replica of the Deployment is Ready on the real node and one
// of them leads.
func waitForOperator(ctx context.Context) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorDeployment}, dep)).To(Succeed())
		g.Expect(dep.Status.ObservedGeneration).To(Equal(dep.Generation))
		g.Expect(dep.Status.UpdatedReplicas).To(Equal(*dep.Spec.Replicas))
		g.Expect(dep.Status.AvailableReplicas).To(Equal(*dep.Spec.Replicas))
		g.Expect(dep.Status.Replicas).To(Equal(*dep.Spec.Replicas), "an old pod is still there")
		g.Expect(operatorPods(ctx, g)).To(HaveLen(int(*dep.Spec.Replicas)), "Ready pods of the operator")
		pod, lease := leaderPod(ctx, g)
		// After a restart of the node the same pod runs a new container, which leads only once the
		// lease of the old one has expired: a renewal before the container started is the old one's.
		running := pod.Status.ContainerStatuses[0].State.Running
		g.Expect(running).NotTo(BeNil())
		g.Expect(lease.Spec.AcquireTime).NotTo(BeNil())
		g.Expect(lease.Spec.AcquireTime.Time).To(BeTemporally(">=", running.StartedAt.Time), "acquired by the running container")
	}).WithContext(ctx).WithTimeout(4*time.Minute).Should(Succeed(), "the operator's Deployment Available and leading")
}

// operatorPods are the Ready pods of the operator's Deployment (its replicas: one leads).
func operatorPods(ctx context.Context, g Gomega) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, pods, client.InNamespace(operatorNamespace),
		client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
	var ready []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && podReady(&p) {
			ready = append(ready, p)
		}
	}
	return ready
}

// leaderPod is the Ready pod of the operator that holds the leader election Lease (its
// holderIdentity is the pod's name and a suffix), and the Lease.
func leaderPod(ctx context.Context, g Gomega) (*corev1.Pod, *coordinationv1.Lease) {
	lease := &coordinationv1.Lease{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: leaseName}, lease)).To(Succeed())
	// A released Lease (a graceful stop, the last run's) has an empty holder: no pod leads yet.
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	pods := operatorPods(ctx, g)
	var leader *corev1.Pod
	for i := range pods {
		if strings.HasPrefix(holder, pods[i].Name+"_") {
			leader = &pods[i]
		}
	}
	g.Expect(leader).NotTo(BeNil(), "the Lease's holder %q is no Ready pod of the operator", holder)
	return leader, lease
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var _ = Describe("The operator installed from the release's install.yaml", func() {
	It("runs on the real node, leads, is confined by the runtime and serves its metrics through the Service", func(ctx SpecContext) {
		pod, _ := leaderPod(ctx, Default)
		By("running pod " + pod.Name + " on " + pod.Spec.NodeName + " from " + pod.Spec.Containers[0].Image)
		Expect(pod.Spec.NodeName).To(Equal(realNodeName))
		Expect(pod.Spec.Containers[0].Image).To(Equal(operatorImage))
		status := pod.Status.ContainerStatuses[0]
		Expect(status.ContainerID).To(HavePrefix("containerd://"))
		Expect(status.ImageID).To(Equal(operatorImage), "pulled by its public name, the release's digest")

		By("reading the manager process's confinement from /proc, as the kernel enforces it")
		pid, err := support.ContainerPID(status.ContainerID)
		Expect(err).NotTo(HaveOccurred())
		procStatus := readProcStatus(pid)
		Expect(procStatus["Uid"]).To(HavePrefix("65532\t"), "runAsNonRoot with the image's user")
		Expect(procStatus["CapEff"]).To(Equal("0000000000000000"), "every capability dropped")
		Expect(procStatus["CapBnd"]).To(Equal("0000000000000000"), "every capability dropped")
		Expect(procStatus["NoNewPrivs"]).To(Equal("1"), "allowPrivilegeEscalation false")
		Expect(procStatus["Seccomp"]).To(Equal("2"), "seccomp RuntimeDefault: a filter")
		Expect(rootMountOptions(pid)).To(HavePrefix("ro,"), "readOnlyRootFilesystem")

		By("running in a namespace that enforces the restricted Pod Security Standard, which admitted it")
		namespace := &corev1.Namespace{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: operatorNamespace}, namespace)).To(Succeed())
		Expect(namespace.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))

		By("scraping the metrics at every endpoint of Service " + metricsService + " with a ServiceAccount token")
		token := scraperToken(ctx)
		var want []string
		for _, p := range operatorPods(ctx, Default) {
			want = append(want, net.JoinHostPort(p.Status.PodIP, "8443"))
		}
		leaderEndpoint := net.JoinHostPort(pod.Status.PodIP, "8443")
		endpoints := serviceEndpoints(ctx, operatorNamespace, metricsService)
		Expect(endpoints).To(ConsistOf(want), "every replica, the standby too")
		for _, endpoint := range endpoints {
			code, body := scrape(ctx, "https://"+endpoint+"/metrics", token)
			Expect(code).To(Equal(http.StatusOK), body)
			if endpoint == leaderEndpoint {
				Expect(body).To(ContainSubstring("controller_runtime_reconcile_total{controller=\"oaatgroup\""))
			}
			code, _ = scrape(ctx, "https://"+endpoint+"/metrics", "")
			Expect(code).To(Equal(http.StatusUnauthorized), "without a token")
		}

		By("scraping them with Debian's Prometheus, its targets the Service's endpoints")
		expectPrometheusScrapes(ctx, token, pod.Status.PodIP)

		By("reading the manager's log through the API server and the kubelet")
		logs, err := clientset.CoreV1().Pods(operatorNamespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(logs)).To(ContainSubstring("Successfully acquired lease"))
	})
})

func readProcStatus(pid int) map[string]string {
	GinkgoHelper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	Expect(err).NotTo(HaveOccurred())
	fields := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if key, value, ok := strings.Cut(line, ":"); ok {
			fields[key] = strings.TrimSpace(value)
		}
	}
	return fields
}

// rootMountOptions returns the mount options of the process's root file system.
func rootMountOptions(pid int) string {
	GinkgoHelper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 5 && fields[4] == "/" {
			return fields[5]
		}
	}
	Fail("the process has no root mount")
	return ""
}

// scraper is the identity Prometheus scrapes the operator with.
var scraper = support.Scraper{
	Namespace: monitoringNamespace, ServiceAccount: scraperSA, ClusterRole: metricsReaderRole,
	Binding: "realnode-prometheus-" + metricsReaderRole,
}

// scraperToken makes the monitoring namespace and the scraper's ServiceAccount and binding, and
// returns a token of it.
func scraperToken(ctx context.Context) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: monitoringNamespace}}
	if err := k8sClient.Create(ctx, ns); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred(), "creating namespace %s", monitoringNamespace)
	}
	token, err := scraper.Token(ctx, clientset)
	Expect(err).NotTo(HaveOccurred())
	return token
}

// serviceEndpoints waits until the Service has one ready endpoint per Ready replica of the
// operator and returns them (support.ReadyEndpoints). There is no kube-proxy here: the pods'
// addresses are reachable from this machine.
func serviceEndpoints(ctx context.Context, namespace, service string) []string {
	GinkgoHelper()
	var endpoints []string
	Eventually(func(g Gomega) {
		var err error
		endpoints, err = support.ReadyEndpoints(ctx, k8sClient, namespace, service)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(endpoints).To(HaveLen(len(operatorPods(ctx, g))), "ready endpoints of Service %s/%s", namespace, service)
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	return endpoints
}

func scrape(ctx context.Context, url, token string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	Expect(err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the operator's self-signed certificate
	}}
	resp, err := c.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(body)
}

// dumpDiagnostics prints the namespace's groups, pods and the operator's log tail.
func dumpDiagnostics(ctx context.Context, namespace string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	w := GinkgoWriter
	fmt.Fprintf(w, "\n===== Diagnostics of namespace %s\n", namespace)
	groups := &v1alpha1.OaatGroupList{}
	_ = k8sClient.List(ctx, groups, client.InNamespace(namespace))
	for _, group := range groups.Items {
		out, _ := json.MarshalIndent(map[string]any{"spec": group.Spec, "status": group.Status}, "", "  ")
		fmt.Fprintf(w, "--- OaatGroup %s\n%s\n", group.Name, out)
	}
	pods := &corev1.PodList{}
	_ = k8sClient.List(ctx, pods, client.InNamespace(namespace))
	for _, p := range pods.Items {
		out, _ := json.Marshal(p.Status.ContainerStatuses)
		fmt.Fprintf(w, "--- Pod %s phase=%s item=%q %s\n", p.Name, p.Status.Phase, p.Annotations[v1alpha1.AnnotationItem], out)
	}
	fmt.Fprintf(w, "--- Pods seen by the watcher\n%s", tracker.Describe(namespace))
	for _, p := range operatorPods(ctx, Default) {
		if logs, err := clientset.CoreV1().Pods(operatorNamespace).GetLogs(p.Name,
			&corev1.PodLogOptions{TailLines: ptr.To[int64](60)}).DoRaw(ctx); err == nil {
			fmt.Fprintf(w, "--- Operator log of %s\n%s\n", p.Name, logs)
		}
	}
}

// scrapeJob is the job name a ServiceMonitor of the metrics Service gives its scrape config.
const scrapeJob = metricsService

// expectPrometheusScrapes runs a Prometheus server (Debian's) that scrapes the endpoints of the
// metrics Service over HTTPS with the ServiceAccount's token, as a ServiceMonitor of that Service
// has it do. Debian's Prometheus (2.42) is built without Kubernetes service discovery ("field
// kubernetes_sd_configs not found in type config.ScrapeConfig"), so the targets are the Service's
// ready endpoints, read from its EndpointSlices as that discovery would. It checks that
// Prometheus scraped the operator's pod, then stops it.
func expectPrometheusScrapes(ctx context.Context, token, leaderIP string) {
	GinkgoHelper()
	binary, err := support.PrometheusBinary()
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(cluster.StateDir, "prometheus")
	Expect(os.RemoveAll(dir)).To(Succeed())
	logPath := filepath.Join(cluster.StateDir, "logs", "prometheus.log")
	proc, baseURL, err := support.StartScrapingPrometheus(binary, dir, logPath, token, support.ScrapeJob{
		Name:    scrapeJob,
		Targets: serviceEndpoints(ctx, operatorNamespace, metricsService),
		Labels:  map[string]string{"namespace": operatorNamespace, "service": metricsService},
	}, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	defer func() { Expect(proc.Stop(30 * time.Second)).To(Succeed()) }()
	Eventually(func(g Gomega) {
		g.Expect(proc.UnexpectedExit(20)).To(Succeed())
		up, err := support.QueryPrometheus(ctx, baseURL, `up{job="`+scrapeJob+`"} == 1`)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(up).To(HaveLen(len(operatorPods(ctx, g))), "every replica scraped")
		reconciles, err := support.QueryPrometheus(ctx, baseURL, `controller_runtime_reconcile_total{job="`+scrapeJob+
			`",controller="oaatgroup",instance="`+net.JoinHostPort(leaderIP, "8443")+`"}`)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(reconciles).NotTo(BeEmpty(), "the leader's reconciles")
	}).WithContext(ctx).WithTimeout(90*time.Second).WithPolling(time.Second).Should(Succeed(),
		"Prometheus never scraped the operator through the Service; log %s", logPath)
}
