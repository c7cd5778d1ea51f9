//go:build olmcatalog

package olmcatalog

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The package and channel of the catalog (catalog/oaat-operator/index.yaml).
const (
	packageName = "oaat-operator"
	channelName = "alpha"
)

// csvName is the CSV of this release, previousCSVName that of the release it replaces: the
// package's name and the version of the bundle image's tag (set by loadEnv).
var csvName, previousCSVName string

// The group every mode runs, and its items: each a real busybox pod that prints its item.
const (
	typeName  = "echo"
	groupName = "echo"
)

var items = []string{"/srv/a", "/srv/b"}

// installMode is one way to install the operator (support.InstallMode).
type installMode = support.InstallMode

// pageNamespace is the namespace docs/olm.md installs the operator in: the AllNamespaces mode's,
// whose checks and uninstall are the page's commands (and the runbook OaatOperatorDown's).
const pageNamespace = "oaat-operator"

var installModes = support.InstallModes(pageNamespace, "oaat-catalog-work")

var _ = Describe("Installing from the catalog image", Ordered, func() {
	for _, m := range installModes {
		It("installs with a Subscription, and OLM's Deployment runs real item pods, in install mode "+m.Name,
			func(ctx SpecContext) { installAndRun(ctx, m) }, SpecTimeout(12*time.Minute))
	}

	It("leaves nothing of the operator once the CRDs are deleted", func(ctx SpecContext) {
		expectNothingLeft(ctx)
	}, SpecTimeout(3*time.Minute))
})

// installAndRun installs the operator in the mode from the catalog, checks what OLM made and
// that its Deployment runs the operator's image on the real node, runs a group, then uninstalls
// (Subscription, then CSV) in a cleanup, which runs even when a step failed.
func installAndRun(ctx SpecContext, m installMode) {
	start := time.Now()
	// Every namespace of the mode enforces the restricted Pod Security Standard, as docs/olm.md's
	// does: the operator's pods and the item pods of runItems meet it.
	for _, ns := range m.Namespaces() {
		Expect(support.CreateNamespace(ctx, clientset, ns, support.RestrictedNamespaceLabels(), 30*time.Second)).To(Succeed())
	}
	DeferCleanup(func(ctx SpecContext) {
		uninstall(ctx, m)
		deleteNamespaces(ctx, m.Namespaces()...)
	}, NodeTimeout(4*time.Minute))

	objects.Create(ctx, support.GVROperatorGroup, support.OperatorGroup("oaat", m.InstallNamespace, m.TargetNamespaces))
	ipName := subscribe(ctx, m)
	installed := time.Since(start).Round(time.Millisecond)
	AddReportEntry(m.Name+": CSV Succeeded", installed.String())
	GinkgoWriter.Printf("%s: InstallPlan %s Complete and CSV Succeeded after %s\n", m.Name, ipName, installed)

	By("checking that OLM's Deployment runs the operator's image on the real node")
	expectPodsOnRealNode(ctx, m.InstallNamespace, "control-plane=controller-manager", env.img)

	runItems(ctx, m)
	AddReportEntry(m.Name+": items ran", time.Since(start).Round(time.Millisecond).String())

	By("scraping the operator through the bundle's metrics Service with Prometheus")
	runs := expectRunMetrics(ctx, m)

	if m.InstallNamespace == pageNamespace {
		By("docs/olm.md: scraping the leader's metrics through a port-forward with Prometheus's token")
		expectLeaderMetrics(ctx, runs)
		By("running the runbook OaatOperatorDown's kubectl get csv, as its first block left NS")
		out := runDocBlocks(ctx, "operator-down-olm", "NS="+pageNamespace)
		Expect(out).To(MatchRegexp(`(?m)^`+regexp.QuoteMeta(csvName)+`\s.*\sSucceeded$`), "kubectl get csv")
		expectOLMTranscripts(ctx)
		By("docs/olm.md: uninstalling keeping the data, then subscribing again")
		keepDataAndResubscribe(ctx, m)
	}
}

// keepDataAndResubscribe runs docs/olm.md's uninstall that keeps the data (the Subscription and
// the CSV deleted; OLM never deletes a CRD), checks that the CRDs and the groups with their items'
// status stayed, subscribes again, and checks that the new operator takes the groups up where
// they were: an item added runs, the others are not run again.
func keepDataAndResubscribe(ctx context.Context, m installMode) {
	GinkgoHelper()
	groups := func(g Gomega) map[string]*v1alpha1.OaatGroup {
		groups := map[string]*v1alpha1.OaatGroup{}
		for _, ns := range m.WorkNamespaces {
			group := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: groupName}, group)).To(Succeed())
			groups[ns] = group
		}
		return groups
	}
	before := groups(Default)
	runDocBlocks(ctx, "uninstall-keep")
	Eventually(func(g Gomega) {
		pods, err := clientset.CoreV1().Pods(m.InstallNamespace).List(ctx, metav1.ListOptions{LabelSelector: "control-plane=controller-manager"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods.Items).To(BeEmpty(), "the operator's pods after the CSV's deletion")
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	_, err := kubectl(ctx, nil, append([]string{"get", "crd"}, support.OwnedCRDs...)...)
	Expect(err).NotTo(HaveOccurred(), "the CRDs after the uninstall that keeps the data")
	for ns, group := range groups(Default) {
		Expect(group.Status.Items).To(Equal(before[ns].Status.Items), "the items' status in %s after the uninstall that keeps the data", ns)
	}

	subscribe(ctx, m)
	added := "/srv/c"
	for _, ns := range m.WorkNamespaces {
		Eventually(func(g Gomega) {
			group := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: groupName}, group)).To(Succeed())
			group.Spec.OaatItems = append(group.Spec.OaatItems, added)
			g.Expect(k8sClient.Update(ctx, group)).To(Succeed())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	}
	Eventually(func(g Gomega) {
		for ns, group := range groups(g) {
			g.Expect(support.ItemsSucceeded(group, []string{added})).To(Succeed(), "in %s", ns)
			for _, old := range before[ns].Status.Items {
				now := support.ItemStatus(group, old.Name)
				g.Expect(now).NotTo(BeNil(), "item %s of %s", old.Name, ns)
				g.Expect(now.LastSuccess).To(Equal(old.LastSuccess), "item %s of %s, not run again", old.Name, ns)
			}
		}
	}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
}

// subscribe creates the operator's Subscription in the mode's namespace and waits until its
// InstallPlan is Complete and the CSV Succeeded; it returns the InstallPlan's name.
func subscribe(ctx context.Context, m installMode) string {
	GinkgoHelper()
	objects.Create(ctx, support.GVRSubscription, support.Subscription{
		Name: packageName, Namespace: m.InstallNamespace, Package: packageName, Channel: channelName,
		CatalogSource: catalogSourceName, CatalogNamespace: olmNamespace,
	}.Object())

	var ipName string
	By("waiting for the InstallPlan to complete and the CSV to succeed")
	Eventually(func(g Gomega) {
		sub := objects.Get(ctx, g, support.GVRSubscription, m.InstallNamespace, packageName)
		ipName, _, _ = unstructured.NestedString(sub.Object, "status", "installPlanRef", "name")
		g.Expect(ipName).NotTo(BeEmpty(), "the Subscription's status: %v", sub.Object["status"])
		ip := objects.Get(ctx, g, support.GVRInstallPlan, m.InstallNamespace, ipName)
		phase, _, _ := unstructured.NestedString(ip.Object, "status", "phase")
		g.Expect(phase).To(Equal("Complete"), "InstallPlan %s: %v", ipName, ip.Object["status"])
		csv := objects.Get(ctx, g, support.GVRClusterServiceVersion, m.InstallNamespace, csvName)
		phase, _, _ = unstructured.NestedString(csv.Object, "status", "phase")
		g.Expect(phase).To(Equal("Succeeded"), "CSV %s: %v", csvName, csv.Object["status"])
	}).WithContext(ctx).WithTimeout(8*time.Minute).Should(Succeed(), func() string {
		return "pods of OLM's namespace:\n" + describePods(ctx, olmNamespace) + "\npods of " + m.InstallNamespace + ":\n" + describePods(ctx, m.InstallNamespace)
	})
	return ipName
}

// runItems creates an OaatType and an OaatGroup in every work namespace and in the namespace
// outside the targets; every item of the watched groups must succeed as a real pod on the real
// node whose log shows its item, and the group outside must get no pod and no status.
func runItems(ctx context.Context, m installMode) {
	GinkgoHelper()
	all := slices.Clone(m.WorkNamespaces)
	if m.OutsideNamespace != "" {
		all = append(all, m.OutsideNamespace)
	}
	for _, ns := range all {
		ot := &v1alpha1.OaatType{
			ObjectMeta: metav1.ObjectMeta{Name: typeName, Namespace: ns},
			Spec: v1alpha1.OaatTypeSpec{
				Type: v1alpha1.OaatTypePod,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{support.Restricted(corev1.Container{
						Name:    "main",
						Image:   "busybox",
						Command: []string{"sh", "-c", `echo "processing $OAAT_ITEM"`},
					})},
				}},
			},
		}
		og := &v1alpha1.OaatGroup{
			ObjectMeta: metav1.ObjectMeta{Name: groupName, Namespace: ns},
			Spec:       v1alpha1.OaatGroupSpec{OaatType: typeName, OaatItems: items, Frequency: "1h"},
		}
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
	}).WithContext(ctx).WithTimeout(4*time.Minute).Should(Succeed(), func() string {
		return strings.Join(func() []string {
			var out []string
			for _, ns := range m.WorkNamespaces {
				out = append(out, describePods(ctx, ns))
			}
			return out
		}(), "\n")
	})

	for _, ns := range m.WorkNamespaces {
		pods, err := clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelGroup + "=" + groupName})
		Expect(err).NotTo(HaveOccurred())
		seen := map[string]bool{}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodSucceeded {
				continue
			}
			Expect(p.Spec.NodeName).To(Equal("real-node"), "item pod %s/%s", ns, p.Name)
			logs, err := kubectl(ctx, nil, "-n", ns, "logs", p.Name)
			Expect(err).NotTo(HaveOccurred())
			item := p.Labels[v1alpha1.LabelItem]
			for _, want := range items {
				if strings.TrimSpace(logs) == "processing "+want {
					seen[want] = true
				}
			}
			Expect(logs).To(HavePrefix("processing /srv/"), "the log of item pod %s/%s (item label %q)", ns, p.Name, item)
		}
		for _, item := range items {
			Expect(seen[item]).To(BeTrue(), "no succeeded pod in %s printed item %s", ns, item)
		}
	}

	if m.OutsideNamespace != "" {
		By("checking that the group in " + m.OutsideNamespace + ", outside the OperatorGroup's targets, is left alone")
		Consistently(func(g Gomega) {
			group := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: m.OutsideNamespace, Name: groupName}, group)).To(Succeed())
			g.Expect(group.Status.Items).To(BeEmpty(), "the operator reconciled a group outside its targets")
			pods, err := clientset.CoreV1().Pods(m.OutsideNamespace).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods.Items).To(BeEmpty(), "pods outside the targets")
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}
}

// expectOLMTranscripts makes the console transcript of docs/olm.md that the install from the
// catalog shows, its CSV in the page's namespace.
func expectOLMTranscripts(ctx context.Context) {
	GinkgoHelper()
	block := &support.Transcript{Runner: olmTranscriptRunner()}
	Expect(block.Run(ctx, "kubectl get csv -n oaat-operator")).To(Succeed())
	checkOLMTranscripts(map[string]string{"olm-get-csv": block.String()})
}

// olmTranscriptRunner runs the commands of docs/olm.md's transcripts as the cluster's admin, with
// env added to the environment (operator-sdk's home and proxy).
func olmTranscriptRunner(extraEnv ...string) support.TranscriptRunner {
	return support.TranscriptRunner{Kubectl: env.kubectl, OperatorSDK: env.operatorSDK, Dir: env.repoRoot,
		Env: append([]string{"KUBECONFIG=" + adminKubeconfig}, extraEnv...)}
}

// checkOLMTranscripts compares the transcripts of docs/olm.md (support.TranscriptPages) named in
// outputs with the page's blocks, or with WRITE_TRANSCRIPTS=1 (make docs-transcripts-olm) writes
// them into the page. Each spec makes some of the page's transcripts (CheckSomeTranscripts).
func checkOLMTranscripts(outputs map[string]string) {
	GinkgoHelper()
	pages, err := support.TranscriptPages(env.repoRoot, "tests/olmcatalog")
	Expect(err).NotTo(HaveOccurred())
	stale, err := support.CheckSomeTranscripts(env.repoRoot, pages, outputs, os.Getenv("WRITE_TRANSCRIPTS") == "1")
	Expect(err).NotTo(HaveOccurred())
	Expect(stale).To(BeEmpty(), "the transcripts of docs/olm.md differ from what their commands print "+
		"(make docs-transcripts-olm writes them):\n%s", strings.Join(stale, "\n"))
}

// uninstall deletes the groups while the operator runs, then the Subscription, then the CSV, as
// docs/olm.md says, and waits until OLM has removed the operator's Deployment; then the
// OperatorGroup. In the page's namespace it runs the page's uninstall (marked checked-by:
// tests/olmcatalog uninstall), which deletes the CRDs and the bundle's ClusterRoles as well: the
// next mode's InstallPlan makes them again.
func uninstall(ctx context.Context, m installMode) {
	GinkgoHelper()
	if m.InstallNamespace == pageNamespace {
		runDocBlocks(ctx, "uninstall")
	} else {
		Expect(support.DeleteGroups(ctx, k8sClient, time.Minute, m.Namespaces()...)).To(Succeed())
	}
	for _, step := range []struct {
		what string
		del  func() error
	}{
		{"Subscription", func() error {
			return dynClient.Resource(support.GVRSubscription).Namespace(m.InstallNamespace).Delete(ctx, packageName, metav1.DeleteOptions{})
		}},
		{"CSV", func() error {
			return dynClient.Resource(support.GVRClusterServiceVersion).Namespace(m.InstallNamespace).Delete(ctx, csvName, metav1.DeleteOptions{})
		}},
		{"OperatorGroup", func() error {
			return dynClient.Resource(support.GVROperatorGroup).Namespace(m.InstallNamespace).Delete(ctx, "oaat", metav1.DeleteOptions{})
		}},
	} {
		if err := step.del(); err != nil && !apierrors.IsNotFound(err) {
			Fail("deleting the " + step.what + ": " + err.Error())
		}
		if step.what == "CSV" {
			Eventually(func(g Gomega) {
				pods, err := clientset.CoreV1().Pods(m.InstallNamespace).List(ctx, metav1.ListOptions{LabelSelector: "control-plane=controller-manager"})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(pods.Items).To(BeEmpty(), "the operator's pods after the CSV's deletion")
			}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		}
	}
}

// appLabel marks what the operator ships for users (the bundle's ClusterRoles among them).
const appLabel = "app.kubernetes.io/name=oaat-operator"

// expectNothingLeft runs the last steps of the README's uninstall, deleting the CRDs and the
// bundle's ClusterRoles (cluster-scoped objects of a bundle outlive its CSV in OLM v0), and checks
// that nothing of the operator is left in the cluster: no CRD of oaat.io, no ClusterRole or
// ClusterRoleBinding of the bundle or made by OLM for the CSV, no pod from the operator's image.
func expectNothingLeft(ctx context.Context) {
	GinkgoHelper()
	_, err := kubectl(ctx, nil, append(append([]string{"delete", "crd"}, support.OwnedCRDs...), "--ignore-not-found", "--wait=true")...)
	Expect(err).NotTo(HaveOccurred())
	_, err = kubectl(ctx, nil, "delete", "clusterrole", "-l", appLabel)
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) {
		out, err := kubectl(ctx, nil, "get", "crd", "-o", "name")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).NotTo(ContainSubstring(".oaat.io"), "CRDs left")
		out, err = kubectl(ctx, nil, "get", "clusterrole,clusterrolebinding", "-o", "name")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).NotTo(ContainSubstring(csvName), "cluster-scoped RBAC of the CSV left")
		g.Expect(out).NotTo(ContainSubstring("/"+packageName+"-"), "cluster-scoped RBAC of the bundle left")
		pods, err := clientset.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				g.Expect(c.Image).NotTo(Equal(env.img), "pod %s/%s", p.Namespace, p.Name)
			}
		}
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
}
