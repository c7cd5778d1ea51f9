package support

import (
	"github.com/oaat-io/oaat-operator/hack/devkit"

	"context"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The set-up that the Ginkgo suites on a local cluster of their own share (tests/e2e,
// tests/realnode, tests/olminstall, tests/olmcatalog). A failure fails the suite.

// StartSuiteCluster sets the polling of Eventually and Consistently to poll, starts the suite's
// cluster (purged first when purge, so that it starts empty) and returns its admin kubeconfig and
// the admin's clients. Register the teardown that stops cluster before calling it, so that what
// did start is stopped even when the set-up fails half-way.
func StartSuiteCluster(ctx context.Context, cluster *Cluster, poll time.Duration, purge bool) (string, Clients) {
	ginkgo.GinkgoHelper()
	gomega.SetDefaultEventuallyPollingInterval(poll)
	gomega.SetDefaultConsistentlyPollingInterval(poll)
	if purge {
		gomega.Expect(cluster.Purge(ctx)).To(gomega.Succeed(), "removing the state of an earlier run")
	}
	start := time.Now()
	kubeconfig, err := cluster.Up(ctx)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "starting the local cluster")
	took := time.Since(start).Round(time.Millisecond)
	ginkgo.GinkgoWriter.Printf("Cluster up in %s, state in %s\n", took, cluster.StateDir)
	ginkgo.AddReportEntry("cluster up", took.String())
	clients, err := NewClients(kubeconfig)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return kubeconfig, clients
}

// RemoveSuiteNamespaces deletes the namespaces that carry label, those of an earlier run that did
// not finish (the cluster's data outlives a run), and waits until they are gone, so that the
// operator does not spend this run on their groups.
func RemoveSuiteNamespaces(ctx context.Context, c client.Client, label string) {
	ginkgo.GinkgoHelper()
	list := &corev1.NamespaceList{}
	gomega.Expect(c.List(ctx, list, client.HasLabels{label})).To(gomega.Succeed())
	for i := range list.Items {
		gomega.Expect(client.IgnoreNotFound(c.Delete(ctx, &list.Items[i]))).To(gomega.Succeed())
	}
	if len(list.Items) > 0 {
		ginkgo.GinkgoWriter.Printf("Deleting %d test namespaces still terminating or left by an earlier run\n", len(list.Items))
	}
	gomega.Eventually(func(g gomega.Gomega) {
		left := &corev1.NamespaceList{}
		g.Expect(c.List(ctx, left, client.HasLabels{label})).To(gomega.Succeed())
		g.Expect(left.Items).To(gomega.BeEmpty())
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(gomega.Succeed(), "namespaces of an earlier run")
}

// CreateSuiteNamespace creates a namespace of its own for the running spec, named from prefix and
// marked with label, and returns it.
func CreateSuiteNamespace(ctx context.Context, c client.Client, prefix, label string) *corev1.Namespace {
	ginkgo.GinkgoHelper()
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix, Labels: map[string]string{label: "true"}}}
	gomega.Expect(c.Create(ctx, namespace)).To(gomega.Succeed())
	ginkgo.By("using namespace " + namespace.Name)
	return namespace
}

// ProcessesLeft waits, at most timeout in all, for each process of pids (by name) to be gone, and
// lists those that are not, then any other live process that names a path under dir.
func ProcessesLeft(pids map[string]int, dir string, timeout time.Duration) []string {
	var left []string
	deadline := time.Now().Add(timeout)
	for name, pid := range pids {
		for devkit.ProcessAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if devkit.ProcessAlive(pid) {
			left = append(left, fmt.Sprintf("process left running: %s pid %d", name, pid))
		}
	}
	for _, p := range devkit.ProcessesUsing(dir) {
		left = append(left, "process left running that uses "+dir+": "+p)
	}
	return left
}
