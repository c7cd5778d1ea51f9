//go:build olminstall

package olminstall

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// leaderMessage matches what the manager logs (through client-go's leader election) once it
// leads; it reconciles nothing before.
const leaderMessage = `(?i)successfully acquired lease`

// The OaatType and OaatGroup the suite runs in each namespace, and the group's items.
const (
	typeName  = "olm-install-type"
	groupName = "olm-install-group"
)

var items = []string{"item-1", "item-2"}

// subjectAccessReview asks whether the user (with groups) may do verb on the resource.
func subjectAccessReview(user string, groups []string, namespace, group, resource, subresource, verb string) *authorizationv1.SubjectAccessReview {
	return &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Group: group, Resource: resource, Subresource: subresource, Verb: verb,
		},
	}}
}

// startManager runs bin/manager outside the cluster as the ServiceAccount, with the
// WATCH_NAMESPACE OLM gives the Deployment's pod and the lease in the install namespace, metrics
// off; it waits until the manager is ready and leads.
func startManager(ctx context.Context, m installMode, saName, watchNamespace string) *devkit.Process {
	GinkgoHelper()
	kubeconfig := filepath.Join(cluster.StateDir, "manager-"+m.Name+".kubeconfig")
	Expect(devkit.WriteServiceAccountKubeconfig(ctx, clientset, adminKubeconfig, m.InstallNamespace, saName, kubeconfig, time.Hour)).
		To(Succeed(), "a kubeconfig of the CSV's ServiceAccount")
	port, err := devkit.FreePort()
	Expect(err).NotTo(HaveOccurred())
	probeAddr := "127.0.0.1:" + strconv.Itoa(port)
	logPath := filepath.Join(cluster.StateDir, "logs", "manager-"+m.Name+".log")
	p, err := startProcess("manager-"+m.Name, logPath, []string{"WATCH_NAMESPACE=" + watchNamespace}, env.manager,
		"--kubeconfig", kubeconfig,
		"--leader-elect", "--leader-election-namespace", m.InstallNamespace,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", probeAddr,
		"--zap-log-level=debug")
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() error {
		if err := p.UnexpectedExit(30); err != nil {
			return StopTrying("the manager exited while starting").Wrap(err)
		}
		return devkit.CheckReady(ctx, "http://"+probeAddr+"/readyz", time.Second)
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "the manager's /readyz; log %s", logPath)
	Eventually(func() (string, error) {
		if err := p.UnexpectedExit(30); err != nil {
			return "", StopTrying("the manager exited").Wrap(err)
		}
		return p.LogSinceStart()
	}).WithContext(ctx).WithTimeout(60*time.Second).Should(MatchRegexp(leaderMessage), "the manager never became leader; log %s", logPath)
	return p
}

// runItems creates an OaatType whose pods last 2 s and succeed, and an OaatGroup of two items, in
// every watched namespace and in the namespace outside the targets; it waits until both items of
// every watched group have succeeded, with at most one live pod per group at any time, and checks
// that the group outside was left alone.
func runItems(ctx context.Context, m installMode) {
	GinkgoHelper()
	// Every pod of the cluster that carries a group's label, so that the group outside the targets
	// is watched too.
	watcher := support.NewOverlapTracker(support.OverlapTrackerOptions{KeepHistory: true})
	podWatch, err := support.WatchPods(ctx, clientset, metav1.NamespaceAll, watcher)
	Expect(err).NotTo(HaveOccurred())
	defer func() { Expect(podWatch.Stop()).To(Succeed(), "the pod watch broke: it may have missed pods") }()

	all := append([]string(nil), m.WorkNamespaces...)
	if m.OutsideNamespace != "" {
		all = append(all, m.OutsideNamespace)
	}
	By("creating OaatType " + typeName + " and OaatGroup " + groupName + " (items " + strings.Join(items, ", ") +
		") in " + strings.Join(all, ", "))
	start := time.Now()
	for _, ns := range all {
		ot := support.KwokType(ns, typeName, "2s", 0)
		og := support.Group(ns, groupName, typeName, items...).Obj()
		Expect(k8sClient.Create(ctx, ot)).To(Succeed(), "creating OaatType in %s", ns)
		Expect(k8sClient.Create(ctx, og)).To(Succeed(), "creating OaatGroup in %s", ns)
	}

	By("waiting until every item of the watched groups has succeeded")
	Eventually(func(g Gomega) {
		for _, ns := range m.WorkNamespaces {
			group := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: groupName}, group)).To(Succeed())
			g.Expect(support.ItemsSucceeded(group, items)).To(Succeed())
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	GinkgoWriter.Printf("Both items succeeded in %s after %s\n", strings.Join(m.WorkNamespaces, ", "), time.Since(start).Round(time.Millisecond))

	for _, ns := range m.WorkNamespaces {
		recs := watcher.PodsOf(ns, groupName)
		Expect(len(recs)).To(BeNumerically(">=", len(items)), "pods seen for %s/%s: %v", ns, groupName, recs)
		Expect(watcher.MaxLive(ns, groupName)).To(Equal(1), "most live pods of %s/%s at once; pods %v", ns, groupName, recs)
	}
	Expect(watcher.Overlaps()).To(BeEmpty(), "two or more live pods of the same group coexisted")

	if m.OutsideNamespace != "" {
		By("checking that the group in " + m.OutsideNamespace + ", outside the OperatorGroup's targets, was left alone")
		group := &v1alpha1.OaatGroup{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: m.OutsideNamespace, Name: groupName}, group)).To(Succeed())
		Expect(group.Status.Conditions).To(BeEmpty(), "the manager reconciled a group outside its targets")
		Expect(group.Status.Items).To(BeEmpty(), "the manager reconciled a group outside its targets")
		Expect(watcher.PodsOf(m.OutsideNamespace, groupName)).To(BeEmpty(), "pods of the group outside the targets")
	}
}

// deleteGroups deletes the watched groups while the manager runs, as docs/olm.md's uninstall
// says (a group keeps the finalizer oaat.io/history until the operator has written its history),
// and checks that each is gone and left its OaatGroupHistory: the CSV's permissions allow both.
func deleteGroups(ctx context.Context, m installMode) {
	GinkgoHelper()
	By("deleting the groups of " + strings.Join(m.WorkNamespaces, ", ") + " while the manager runs")
	for _, ns := range m.WorkNamespaces {
		Expect(k8sClient.Delete(ctx, &v1alpha1.OaatGroup{ObjectMeta: metav1.ObjectMeta{Name: groupName, Namespace: ns}})).To(Succeed())
	}
	Eventually(func(g Gomega) {
		for _, ns := range m.WorkNamespaces {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: groupName}, &v1alpha1.OaatGroup{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "group %s/%s: %v", ns, groupName, err)
			record := &v1alpha1.OaatGroupHistory{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: groupName}, record)).To(Succeed())
			g.Expect(record.Spec.Items).To(HaveLen(len(items)), "the history of %s/%s", ns, groupName)
		}
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
}

// refusedRequests returns the lines of the manager's log that report a request the API server
// refused (forbidden) or whose credentials it did not accept (unauthorized).
func refusedRequests(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		lower := strings.ToLower(sc.Text())
		if strings.Contains(lower, "forbidden") || strings.Contains(lower, "unauthorized") {
			found = append(found, sc.Text())
		}
	}
	return found, sc.Err()
}
