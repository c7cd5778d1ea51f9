//go:build olminstall

package olminstall

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The names the bundle gives the operator's objects, and the annotation OLM puts on the
// Deployment's pod template.
const (
	deploymentName             = "oaat-operator-controller-manager"
	subscriptionName           = "oaat-operator"
	operatorGroupName          = "oaat-operator"
	annotationTargetNamespaces = "olm.targetNamespaces"
	watchNamespaceFieldPath    = "metadata.annotations['" + annotationTargetNamespaces + "']"
)

// The CRDs the bundle owns (checked against the CSV's spec.customresourcedefinitions.owned).
var ownedCRDs = support.OwnedCRDs

// installMode is one way to install the operator (support.InstallMode).
type installMode = support.InstallMode

var installModes = support.InstallModes("oaat-operator", "oaat-olm")

func splitTargets(annotation string) []string {
	t := strings.Split(annotation, ",")
	sort.Strings(t)
	return t
}

var _ = Describe("Installing the bundle through OLM", Ordered, ContinueOnFailure, func() {
	for _, m := range installModes {
		It("installs with a Subscription, and the operator runs with the CSV's permissions, in install mode "+m.Name,
			func(ctx SpecContext) { installAndRun(ctx, m) }, SpecTimeout(5*time.Minute))
	}
})

// installAndRun installs the operator in the mode, checks what OLM made, runs the manager with
// the CSV's ServiceAccount, then uninstalls (in cleanups, which run even when a step failed).
func installAndRun(ctx SpecContext, m installMode) {
	namespaces := m.Namespaces()
	By("creating namespaces " + strings.Join(namespaces, ", "))
	for _, ns := range namespaces {
		createNamespace(ctx, ns)
	}
	DeferCleanup(func(ctx SpecContext) {
		By("deleting namespaces " + strings.Join(namespaces, ", "))
		deleteNamespaces(ctx, namespaces...)
	}, NodeTimeout(3*time.Minute))

	csvRec := startPhaseRecorder(ctx, support.GVRClusterServiceVersion, m.InstallNamespace, "status", "phase")
	ipRec := startPhaseRecorder(ctx, support.GVRInstallPlan, m.InstallNamespace, "status", "phase")
	subRec := startPhaseRecorder(ctx, support.GVRSubscription, m.InstallNamespace, "status", "state")
	rbacRec := startRBACRecorder(ctx, catalog.bundle, m.InstallNamespace)
	t0 := time.Now()
	var timings []string
	// mark records when something happened: as the watch saw it, or else (the poll saw it before
	// the watch delivered it) now.
	mark := func(what string, seen time.Time) {
		if seen.IsZero() {
			seen = time.Now()
		}
		timings = append(timings, fmt.Sprintf("  +%-7s %s", seen.Sub(t0).Round(time.Millisecond), what))
	}
	// Runs after the uninstall (cleanups run last-registered first), so that the report shows it.
	DeferCleanup(func() {
		var problems []string
		for _, r := range []*phaseRecorder{subRec, ipRec, csvRec} {
			if err := r.stop(); err != nil {
				problems = append(problems, err.Error())
			}
		}
		if err := rbacRec.stop(); err != nil {
			problems = append(problems, err.Error())
		}
		report := fmt.Sprintf("install mode %s (namespace %s, targets %q), times from the Subscription's creation:\n%s\nstates and phases seen:\n%s%s%s",
			m.Name, m.InstallNamespace, m.ExpectedTargets(), strings.Join(timings, "\n"),
			subRec.describe(t0), ipRec.describe(t0), csvRec.describe(t0))
		AddReportEntry(m.Name, report)
		GinkgoWriter.Println(report)
		Expect(problems).To(BeEmpty(), "the watches of the OLM objects broke: the report may miss changes")
	})

	By("creating the OperatorGroup and the Subscription (channel " + catalog.channel + ", automatic approval)")
	og := support.OperatorGroup(operatorGroupName, m.InstallNamespace, m.TargetNamespaces)
	sub := support.Subscription{
		Name: subscriptionName, Namespace: m.InstallNamespace, Package: catalog.pkg, Channel: catalog.channel,
		CatalogSource: catalogSourceName, CatalogNamespace: olmNamespace,
	}.Object()
	t0 = time.Now()
	objects.Create(ctx, support.GVROperatorGroup, og)
	objects.Create(ctx, support.GVRSubscription, sub)
	csvName := catalog.bundle
	// The ServiceAccount's name is read from the CSV once it exists; until then, the bundle's. The
	// InstallPlan's is read from the Subscription.
	saName := deploymentName
	var ipName string
	DeferCleanup(func(ctx SpecContext) {
		uninstall(ctx, m, uninstallOf{csv: csvName, sa: saName, installPlan: ipName, t0: t0, mark: mark, rbac: rbacRec})
	}, NodeTimeout(3*time.Minute))
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpDiagnostics(ctx, m)
		}
	})

	By("waiting for the catalog operator to resolve the Subscription into an InstallPlan")
	Eventually(func(g Gomega) {
		expectRunning()
		s := objects.Get(ctx, g, support.GVRSubscription, m.InstallNamespace, subscriptionName)
		ipName, _, _ = unstructured.NestedString(s.Object, "status", "installPlanRef", "name")
		g.Expect(ipName).NotTo(BeEmpty(), "Subscription status: %v", s.Object["status"])
	}).WithContext(ctx).WithTimeout(90 * time.Second).Should(Succeed())
	mark("InstallPlan "+ipName+" referenced by the Subscription", time.Now())

	By("waiting for InstallPlan " + ipName + " to complete")
	Eventually(func(g Gomega) {
		expectRunning()
		ip := objects.Get(ctx, g, support.GVRInstallPlan, m.InstallNamespace, ipName)
		phase, _, _ := unstructured.NestedString(ip.Object, "status", "phase")
		if phase == "Failed" {
			StopTrying("InstallPlan " + ipName + " failed: " + conditionsOf(ip)).Now()
		}
		g.Expect(phase).To(Equal("Complete"), "InstallPlan %s: %s", ipName, conditionsOf(ip))
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	mark("InstallPlan Complete", ipRec.firstAt(ipName, "Complete"))

	By("waiting for CSV " + csvName + " to reach phase Succeeded")
	Eventually(func(g Gomega) {
		expectRunning()
		s := objects.Get(ctx, g, support.GVRSubscription, m.InstallNamespace, subscriptionName)
		installed, _, _ := unstructured.NestedString(s.Object, "status", "installedCSV")
		g.Expect(installed).To(Equal(csvName), "the Subscription's installedCSV")
		csv := objects.Get(ctx, g, support.GVRClusterServiceVersion, m.InstallNamespace, csvName)
		phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase")
		reason, _, _ := unstructured.NestedString(csv.Object, "status", "reason")
		message, _, _ := unstructured.NestedString(csv.Object, "status", "message")
		g.Expect(phase).To(Equal("Succeeded"), "CSV %s: phase %s, reason %s: %s", csvName, phase, reason, message)
	}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
	mark("CSV created", csvRec.firstAt(csvName, csvRec.firstValue(csvName)))
	mark("CSV Succeeded", csvRec.firstAt(csvName, "Succeeded"))

	expectInstallPlanSteps(ctx, m, ipName)
	expectCRDsEstablished(ctx, m, csvName)
	saName = expectServiceAccount(ctx, m, csvName)
	watchNamespace := expectDeployment(ctx, m)
	expectOperatorGroupStatus(ctx, m)
	expectPermissions(ctx, m, saName)
	expectUserRoles(ctx, m)
	expectHistoryPolicy(ctx, m, saName)

	By("running the manager outside the cluster as ServiceAccount " + m.InstallNamespace + "/" + saName +
		", WATCH_NAMESPACE=" + fmt.Sprintf("%q", watchNamespace))
	manager := startManager(ctx, m, saName, watchNamespace)
	DeferCleanup(func() { Expect(manager.Stop(30 * time.Second)).To(Succeed()) })
	runItems(ctx, m)
	deleteGroups(ctx, m)
	By("stopping the manager and reading its log for refused requests")
	Expect(manager.Stop(30 * time.Second)).To(Succeed())
	Expect(refusedRequests(manager.LogPath)).To(BeEmpty(),
		"the manager was refused requests: the CSV lacks a permission (log %s)", manager.LogPath)

	// Still Succeeded: nothing the run did made OLM change its mind.
	Eventually(func(g Gomega) {
		csv := objects.Get(ctx, g, support.GVRClusterServiceVersion, m.InstallNamespace, csvName)
		phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase")
		g.Expect(phase).To(Equal("Succeeded"))
	}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
}

// expectInstallPlanSteps checks that every step of the InstallPlan was carried out, and that its
// steps made the CRDs, the CSV and the ServiceAccount.
func expectInstallPlanSteps(ctx context.Context, m installMode, ipName string) {
	GinkgoHelper()
	By("checking the InstallPlan's steps")
	ip := objects.Get(ctx, Default, support.GVRInstallPlan, m.InstallNamespace, ipName)
	phase, _, _ := unstructured.NestedString(ip.Object, "status", "phase")
	Expect(phase).To(Equal("Complete"))
	steps, _, _ := unstructured.NestedSlice(ip.Object, "status", "plan")
	Expect(steps).NotTo(BeEmpty(), "the InstallPlan has no step")
	kinds := map[string]int{}
	var notDone []string
	for _, s := range steps {
		step, _ := s.(map[string]any)
		status, _ := step["status"].(string)
		kind, _, _ := unstructured.NestedString(step, "resource", "kind")
		name, _, _ := unstructured.NestedString(step, "resource", "name")
		kinds[kind]++
		if status != "Created" && status != "Present" {
			notDone = append(notDone, fmt.Sprintf("%s %s: %s", kind, name, status))
		}
	}
	Expect(notDone).To(BeEmpty(), "InstallPlan steps not carried out")
	for _, kind := range []string{"CustomResourceDefinition", "ClusterServiceVersion", "ServiceAccount",
		"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service", "ServiceMonitor", "PrometheusRule"} {
		Expect(kinds).To(HaveKey(kind), "the InstallPlan creates no %s; steps by kind: %v", kind, kinds)
	}
	GinkgoWriter.Printf("InstallPlan %s: %d steps, by kind %v\n", ipName, len(steps), kinds)
}

func expectCRDsEstablished(ctx context.Context, m installMode, csvName string) {
	GinkgoHelper()
	csv := objects.Get(ctx, Default, support.GVRClusterServiceVersion, m.InstallNamespace, csvName)
	owned, _, _ := unstructured.NestedSlice(csv.Object, "spec", "customresourcedefinitions", "owned")
	var inCSV []string
	for _, o := range owned {
		if d, ok := o.(map[string]any); ok {
			name, _ := d["name"].(string)
			inCSV = append(inCSV, name)
		}
	}
	Expect(ownedCRDs).To(ConsistOf(inCSV), "the CRDs the suite checks (ownedCRDs) against those CSV %s owns", csvName)
	By("checking that the CRDs " + strings.Join(ownedCRDs, ", ") + " exist and are Established")
	for _, name := range ownedCRDs {
		Eventually(func(g Gomega) {
			crd := objects.Get(ctx, g, support.GVRCustomResourceDefinition, "", name)
			conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			g.Expect(conditions).To(ContainElement(And(
				HaveKeyWithValue("type", "Established"), HaveKeyWithValue("status", "True"),
			)), "CRD %s is not Established", name)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	}
}

// expectServiceAccount returns the ServiceAccount of the CSV's Deployment, after checking that
// OLM created it in the install namespace.
func expectServiceAccount(ctx context.Context, m installMode, csvName string) string {
	GinkgoHelper()
	csv := objects.Get(ctx, Default, support.GVRClusterServiceVersion, m.InstallNamespace, csvName)
	deployments, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
	Expect(deployments).NotTo(BeEmpty(), "the CSV's install strategy has no deployment")
	first, _ := deployments[0].(map[string]any)
	saName, _, _ := unstructured.NestedString(first, "spec", "template", "spec", "serviceAccountName")
	Expect(saName).NotTo(BeEmpty(), "the CSV's deployment names no ServiceAccount")
	By("checking that OLM created ServiceAccount " + m.InstallNamespace + "/" + saName)
	sa := &corev1.ServiceAccount{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: m.InstallNamespace, Name: saName}, sa)).To(Succeed())
	return saName
}

// expectDeployment checks that the Deployment OLM made is available, that its pod template takes
// WATCH_NAMESPACE from the olm.targetNamespaces annotation, and that the annotation lists the
// mode's target namespaces; it returns the annotation, the WATCH_NAMESPACE the pod gets.
func expectDeployment(ctx context.Context, m installMode) string {
	GinkgoHelper()
	By("checking Deployment " + deploymentName + ": available, WATCH_NAMESPACE from " + annotationTargetNamespaces)
	dep := &appsv1.Deployment{}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: m.InstallNamespace, Name: deploymentName}, dep)).To(Succeed())
		available := false
		for _, c := range dep.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				available = true
			}
		}
		g.Expect(available).To(BeTrue(), "Deployment conditions: %+v", dep.Status.Conditions)
		g.Expect(dep.Status.AvailableReplicas).To(BeNumerically(">=", 1))
	}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())

	annotation, ok := dep.Spec.Template.Annotations[annotationTargetNamespaces]
	Expect(ok).To(BeTrue(), "the pod template has no %s annotation: %v", annotationTargetNamespaces, dep.Spec.Template.Annotations)
	Expect(splitTargets(annotation)).To(Equal(m.ExpectedTargets()), "the pod template's %s", annotationTargetNamespaces)

	var watchEnv []corev1.EnvVar
	for _, c := range dep.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == "WATCH_NAMESPACE" {
				watchEnv = append(watchEnv, e)
			}
		}
	}
	Expect(watchEnv).To(HaveLen(1), "containers with WATCH_NAMESPACE")
	Expect(watchEnv[0].ValueFrom).NotTo(BeNil(), "WATCH_NAMESPACE has no valueFrom: %+v", watchEnv[0])
	Expect(watchEnv[0].ValueFrom.FieldRef).NotTo(BeNil(), "WATCH_NAMESPACE is not from a field: %+v", watchEnv[0])
	Expect(watchEnv[0].ValueFrom.FieldRef.FieldPath).To(Equal(watchNamespaceFieldPath))

	// The pod kwok runs for it: Running, Ready, with the annotation (it never runs the image).
	pods := &corev1.PodList{}
	Expect(k8sClient.List(ctx, pods, client.InNamespace(m.InstallNamespace),
		client.MatchingLabels(dep.Spec.Selector.MatchLabels))).To(Succeed())
	var ready []string
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				ready = append(ready, p.Name)
				Expect(p.Annotations).To(HaveKeyWithValue(annotationTargetNamespaces, annotation), "pod %s", p.Name)
			}
		}
	}
	Expect(ready).NotTo(BeEmpty(), "no Ready pod of the Deployment")
	return annotation
}

// expectOperatorGroupStatus checks the namespaces OLM resolved the OperatorGroup to.
func expectOperatorGroupStatus(ctx context.Context, m installMode) {
	GinkgoHelper()
	og := objects.Get(ctx, Default, support.GVROperatorGroup, m.InstallNamespace, operatorGroupName)
	namespaces, _, _ := unstructured.NestedStringSlice(og.Object, "status", "namespaces")
	sort.Strings(namespaces)
	Expect(namespaces).To(Equal(m.ExpectedTargets()), "the OperatorGroup's status.namespaces")
}

// expectPermissions asks the API server, with SubjectAccessReviews, whether the ServiceAccount may
// do what the manager does, in every watched namespace and in its own (leader election), and that
// it may do nothing more where it must not: no pod created outside its target namespaces (in
// kube-system or a namespace it does not watch) except in AllNamespaces mode, no ConfigMap written
// anywhere, no Lease but its own read or updated. The run shows most of the first part; this also
// covers what the local cluster does not enforce: item pods carry an owner reference with
// blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement admission plugin (OpenShift
// runs it) allows only to who may update oaatgroups/finalizers.
func expectPermissions(ctx context.Context, m installMode, saName string) {
	GinkgoHelper()
	user := "system:serviceaccount:" + m.InstallNamespace + ":" + saName
	By("checking the permissions of " + user + " with SubjectAccessReviews")
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + m.InstallNamespace, "system:authenticated"}
	type need struct{ group, resource, subresource, verb, name string }
	inWatched := []need{
		{"", "pods", "", "create", ""}, {"", "pods", "", "delete", ""}, {"", "pods", "", "get", ""},
		{"", "pods", "", "list", ""}, {"", "pods", "", "watch", ""},
		{"", "configmaps", "", "get", ""}, {"", "configmaps", "", "list", ""}, {"", "configmaps", "", "watch", ""},
		{"", "persistentvolumeclaims", "", "get", ""}, {"", "persistentvolumeclaims", "", "list", ""}, {"", "persistentvolumeclaims", "", "watch", ""},
		{"oaat.io", "oaatgroups", "", "get", ""}, {"oaat.io", "oaatgroups", "", "list", ""}, {"oaat.io", "oaatgroups", "", "watch", ""},
		{"oaat.io", "oaatgroups", "status", "update", ""}, {"oaat.io", "oaatgroups", "finalizers", "update", ""},
		{"oaat.io", "oaatgroups", "", "patch", ""},
		{"oaat.io", "oaatgrouphistories", "", "create", ""}, {"oaat.io", "oaatgrouphistories", "", "get", ""},
		{"oaat.io", "oaatgrouphistories", "", "update", ""}, {"oaat.io", "oaatgrouphistories", "", "delete", ""},
		{"oaat.io", "oaattypes", "", "list", ""}, {"oaat.io", "oaattypes", "", "watch", ""},
		{"events.k8s.io", "events", "", "create", ""}, {"events.k8s.io", "events", "", "patch", ""},
	}
	inOwn := []need{
		{"coordination.k8s.io", "leases", "", "get", v1alpha1.LeaderElectionID}, {"coordination.k8s.io", "leases", "", "create", ""},
		{"coordination.k8s.io", "leases", "", "update", v1alpha1.LeaderElectionID},
	}
	neverAnywhere := []need{
		{"", "configmaps", "", "create", ""}, {"", "configmaps", "", "update", "aws-auth"}, {"", "configmaps", "", "patch", "aws-auth"},
		{"", "configmaps", "", "delete", "aws-auth"}, {"", "persistentvolumeclaims", "", "delete", ""}, {"", "persistentvolumeclaims", "", "update", ""},
		{"coordination.k8s.io", "leases", "", "update", "kube-scheduler"}, {"coordination.k8s.io", "leases", "", "get", "kube-scheduler"},
		{"coordination.k8s.io", "leases", "", "delete", v1alpha1.LeaderElectionID},
	}
	allowed := func(namespace string, n need) bool {
		sar := subjectAccessReview(user, groups, namespace, n.group, n.resource, n.subresource, n.verb)
		sar.Spec.ResourceAttributes.Name = n.name
		review, err := clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		return review.Status.Allowed
	}
	describe := func(namespace string, n need) string {
		return fmt.Sprintf("%s %s/%s.%s %q in %q", n.verb, n.resource, n.subresource, n.group, n.name, namespace)
	}
	var denied, granted []string
	for _, ns := range m.WorkNamespaces {
		for _, n := range inWatched {
			if !allowed(ns, n) {
				denied = append(denied, describe(ns, n))
			}
		}
	}
	for _, n := range inOwn {
		if !allowed(m.InstallNamespace, n) {
			denied = append(denied, describe(m.InstallNamespace, n))
		}
	}
	Expect(denied).To(BeEmpty(), "what the CSV does not grant %s", user)

	everywhere := append([]string{"kube-system"}, m.Namespaces()...)
	for _, ns := range everywhere {
		for _, n := range neverAnywhere {
			if allowed(ns, n) {
				granted = append(granted, describe(ns, n))
			}
		}
	}
	if len(m.TargetNamespaces) > 0 {
		// Outside the target namespaces: nothing of the manager's namespaced rights.
		for _, ns := range []string{"kube-system", m.OutsideNamespace} {
			for _, n := range inWatched {
				if allowed(ns, n) {
					granted = append(granted, describe(ns, n))
				}
			}
		}
	}
	Expect(granted).To(BeEmpty(), "what %s may do though it must not", user)
	if len(m.TargetNamespaces) > 0 {
		By("creating a pod in " + m.OutsideNamespace + " as " + user + ": refused")
		expectPodCreateForbidden(ctx, m, saName)
	}
}

// expectPodCreateForbidden creates a pod outside the target namespaces impersonating the
// ServiceAccount, as a compromised or confused manager would: the API server must refuse it.
func expectPodCreateForbidden(ctx context.Context, m installMode, saName string) {
	GinkgoHelper()
	cfg := rest.CopyConfig(adminCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + m.InstallNamespace + ":" + saName}
	impersonated, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "escape-", Namespace: m.OutsideNamespace},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	_, err = impersonated.CoreV1().Pods(m.OutsideNamespace).Create(ctx, pod, metav1.CreateOptions{})
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "creating a pod in %s as the operator: %v", m.OutsideNamespace, err)
}

// uninstallOf is what uninstall needs to know of an install.
type uninstallOf struct {
	csv         string
	sa          string
	installPlan string    // "" when the Subscription never named one
	t0          time.Time // the Subscription's creation: the report's times are from it
	mark        func(what string, seen time.Time)
	rbac        *rbacRecorder
}

// uninstall removes the Subscription, the CSV and the OperatorGroup, as a user uninstalling the
// operator does (OLM's documented uninstall: the Subscription, then the CSV, whose deletion makes
// OLM delete what it made for it), and waits until OLM has removed what it made for the CSV (the
// CRDs stay: OLM never deletes them).
//
// It first waits until the catalog operator is done executing the InstallPlan (see
// catalogDoneWith): OLM does not stop an execution of the plan when the CSV is deleted, so a CSV
// deleted during one loses its ClusterRole and ClusterRoleBinding in its finalizer and gets them
// back from the execution, for good. A user who uninstalls right after seeing the CSV Succeeded
// can hit that too; the phases OLM shows do not tell when it is safe, the catalog operator's log
// does. Cluster-scoped RBAC of the CSV that outlives the uninstall still fails the spec, with
// its history: deleted and made again, or never deleted.
func uninstall(ctx context.Context, m installMode, u uninstallOf) {
	GinkgoHelper()
	waitErr := waitCatalogDone(ctx, m, u)

	By("uninstalling: deleting the Subscription, CSV " + u.csv + " and the OperatorGroup")
	start := time.Now()
	for _, del := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{support.GVRSubscription, subscriptionName}, {support.GVRClusterServiceVersion, u.csv}, {support.GVROperatorGroup, operatorGroupName}} {
		err := dynClient.Resource(del.gvr).Namespace(m.InstallNamespace).Delete(ctx, del.name, metav1.DeleteOptions{})
		Expect(client.IgnoreNotFound(err)).To(Succeed(), "deleting %s %s", del.gvr.Resource, del.name)
	}
	u.mark("uninstall: Subscription, CSV and OperatorGroup deleted", start)
	Eventually(func(g Gomega) {
		// The CSV, and the copies OLM made of it in the target namespaces.
		csvs, err := dynClient.Resource(support.GVRClusterServiceVersion).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		var left []string
		for _, c := range csvs.Items {
			if c.GetName() == u.csv {
				left = append(left, c.GetNamespace())
			}
		}
		g.Expect(left).To(BeEmpty(), "CSV %s still in namespaces", u.csv)
		err = k8sClient.Get(ctx, client.ObjectKey{Namespace: m.InstallNamespace, Name: deploymentName}, &appsv1.Deployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Deployment %s: %v", deploymentName, err)
		err = k8sClient.Get(ctx, client.ObjectKey{Namespace: m.InstallNamespace, Name: u.sa}, &corev1.ServiceAccount{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ServiceAccount %s: %v", u.sa, err)
		// RBAC OLM made for the CSV, in every namespace and cluster-wide: labelled with it as owner.
		owner := client.MatchingLabels(csvOwnerLabels(u.csv, m.InstallNamespace))
		crs := &rbacv1.ClusterRoleList{}
		g.Expect(k8sClient.List(ctx, crs, owner)).To(Succeed())
		g.Expect(names(crs.Items)).To(BeEmpty(), "ClusterRoles owned by the CSV%s", u.describeLeft("ClusterRole", names(crs.Items), start, waitErr))
		crbs := &rbacv1.ClusterRoleBindingList{}
		g.Expect(k8sClient.List(ctx, crbs, owner)).To(Succeed())
		g.Expect(names(crbs.Items)).To(BeEmpty(), "ClusterRoleBindings owned by the CSV%s", u.describeLeft("ClusterRoleBinding", names(crbs.Items), start, waitErr))
		roles := &rbacv1.RoleList{}
		g.Expect(k8sClient.List(ctx, roles, owner)).To(Succeed())
		g.Expect(names(roles.Items)).To(BeEmpty(), "Roles owned by the CSV")
		rbs := &rbacv1.RoleBindingList{}
		g.Expect(k8sClient.List(ctx, rbs, owner)).To(Succeed())
		g.Expect(names(rbs.Items)).To(BeEmpty(), "RoleBindings owned by the CSV")
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(Succeed(), "what OLM made for CSV %s", u.csv)
	GinkgoWriter.Printf("Uninstalled in %s\n", time.Since(start).Round(time.Millisecond))
	Expect(waitErr).NotTo(HaveOccurred(), "before the uninstall")

	// What is left of the install cluster-wide, besides the CRDs: reported, not checked.
	var left []string
	crs := &rbacv1.ClusterRoleList{}
	Expect(k8sClient.List(ctx, crs)).To(Succeed())
	for _, n := range names(crs.Items) {
		if strings.HasPrefix(n, "oaat-") {
			left = append(left, "ClusterRole "+n)
		}
	}
	crbs := &rbacv1.ClusterRoleBindingList{}
	Expect(k8sClient.List(ctx, crbs)).To(Succeed())
	for _, n := range names(crbs.Items) {
		if strings.HasPrefix(n, "oaat-") {
			left = append(left, "ClusterRoleBinding "+n)
		}
	}
	AddReportEntry(m.Name+": left after the uninstall besides the CRDs", strings.Join(left, ", "))

	// The CRDs stay, as OLM documents.
	for _, name := range ownedCRDs {
		_, err := dynClient.Resource(support.GVRCustomResourceDefinition).Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "CRD %s after the uninstall", name)
	}
}

// waitCatalogDone waits until the catalog operator is done executing the InstallPlan (see
// catalogDoneWith), so that the uninstall does not race it. When the plan never completed (the spec
// failed before), there is nothing to wait for that would end: it says so and returns nil. It
// returns an error rather than failing, so that the uninstall still runs.
func waitCatalogDone(ctx context.Context, m installMode, u uninstallOf) error {
	if u.installPlan == "" {
		GinkgoWriter.Println("No InstallPlan was made: no execution of one to wait for before the uninstall")
		return nil
	}
	ip, err := dynClient.Resource(support.GVRInstallPlan).Namespace(m.InstallNamespace).Get(ctx, u.installPlan, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading InstallPlan %s: %w", u.installPlan, err)
	}
	if phase, _, _ := unstructured.NestedString(ip.Object, "status", "phase"); phase != "Complete" {
		GinkgoWriter.Printf("InstallPlan %s is in phase %q: the catalog operator may still execute it, and what it makes after "+
			"the CSV's deletion stays\n", u.installPlan, phase)
		return nil
	}
	By("waiting until the catalog operator is done executing InstallPlan " + u.installPlan + " (its log shows a sync of it in phase Complete)")
	const timeout = time.Minute
	deadline := time.Now().Add(timeout)
	for {
		done, err := catalogDoneWith(m.InstallNamespace, u.installPlan)
		if err != nil {
			return fmt.Errorf("reading the catalog operator's log: %w", err)
		}
		if done {
			u.mark("the catalog operator done with InstallPlan "+u.installPlan+" (a sync of it in phase Complete)", time.Now())
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the catalog operator's log (%s) shows no sync of InstallPlan %s/%s in phase Complete after %s: "+
				"it may still be executing the plan, and the uninstall may leave what it makes", catalogProc.LogPath,
				m.InstallNamespace, u.installPlan, timeout)
		}
		time.Sleep(poll)
	}
}

// describeLeft describes the ClusterRoles or ClusterRoleBindings of the CSV still there after the
// uninstall that began at start: what the watches saw of each, and what that means.
func (u uninstallOf) describeLeft(kind string, left []string, start time.Time, waitErr error) string {
	if len(left) == 0 {
		return ""
	}
	var b strings.Builder
	for _, name := range left {
		fmt.Fprintf(&b, "\n  %s %s, seen (times from the Subscription's creation; the uninstall began at +%s):%s",
			kind, name, start.Sub(u.t0).Round(time.Millisecond), u.rbac.history(kind, name, u.t0))
		if u.rbac.recreated(kind, name) {
			fmt.Fprintf(&b, "\n    It was deleted with the CSV, then made again (managedFields name the writer; the "+
				"catalog operator applies InstallPlan steps): an execution of InstallPlan %s ran during the uninstall. OLM "+
				"deletes the CSV's cluster-scoped RBAC only once, in the CSV's finalizer, so this stays.", u.installPlan)
		} else {
			b.WriteString("\n    It was never deleted: the CSV's finalizer did not delete it (olm.log: \"Cleaning up resources after CSV deletion\").")
		}
	}
	if waitErr != nil {
		fmt.Fprintf(&b, "\n  Before the uninstall: %v", waitErr)
	}
	return b.String()
}

// names returns the names of the objects.
func names[T any, PT interface {
	*T
	GetName() string
}](items []T) []string {
	var out []string
	for i := range items {
		out = append(out, PT(&items[i]).GetName())
	}
	return out
}

// conditionsOf summarises an object's status conditions.
func conditionsOf(u *unstructured.Unstructured) string {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var parts []string
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		parts = append(parts, fmt.Sprintf("%v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"]))
	}
	return strings.Join(parts, "; ")
}

// statusSummary gives the parts of an OLM object's status that tell how far it got: not the
// manifests an InstallPlan's steps carry.
func statusSummary(u *unstructured.Unstructured) string {
	var parts []string
	for _, f := range []string{"phase", "state", "reason", "message", "installedCSV", "currentCSV"} {
		if v, _, _ := unstructured.NestedString(u.Object, "status", f); v != "" {
			parts = append(parts, f+"="+strconv.Quote(v))
		}
	}
	if ns, found, _ := unstructured.NestedStringSlice(u.Object, "status", "namespaces"); found {
		parts = append(parts, fmt.Sprintf("namespaces=%q", ns))
	}
	if c := conditionsOf(u); c != "" {
		parts = append(parts, "conditions: "+c)
	}
	steps, _, _ := unstructured.NestedSlice(u.Object, "status", "plan")
	for _, st := range steps {
		step, _ := st.(map[string]any)
		kind, _, _ := unstructured.NestedString(step, "resource", "kind")
		name, _, _ := unstructured.NestedString(step, "resource", "name")
		parts = append(parts, fmt.Sprintf("step %s/%s: %v", kind, name, step["status"]))
	}
	return strings.Join(parts, "\n    ")
}

// dumpDiagnostics writes what a failed install needs to be understood: the OLM objects' status,
// the Deployment and pods, the events of the install namespace, and the ends of OLM's logs.
func dumpDiagnostics(ctx context.Context, m installMode) {
	ctx, cancel := withoutCancel(ctx, 15*time.Second)
	defer cancel()
	w := GinkgoWriter
	fmt.Fprintf(w, "\n===== Diagnostics of install mode %s (namespace %s)\n", m.Name, m.InstallNamespace)
	for _, gvr := range []schema.GroupVersionResource{support.GVROperatorGroup, support.GVRSubscription, support.GVRInstallPlan, support.GVRClusterServiceVersion} {
		list, err := dynClient.Resource(gvr).Namespace(m.InstallNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			fmt.Fprintf(w, "listing %s: %v\n", gvr.Resource, err)
			continue
		}
		for _, item := range list.Items {
			fmt.Fprintf(w, "--- %s %s: %s\n", gvr.Resource, item.GetName(), statusSummary(&item))
		}
	}
	deps := &appsv1.DeploymentList{}
	if err := k8sClient.List(ctx, deps, client.InNamespace(m.InstallNamespace)); err == nil {
		for _, d := range deps.Items {
			fmt.Fprintf(w, "--- Deployment %s: replicas %d available %d conditions %+v\n", d.Name, d.Status.Replicas, d.Status.AvailableReplicas, d.Status.Conditions)
		}
	}
	pods := &corev1.PodList{}
	if err := k8sClient.List(ctx, pods, client.InNamespace(m.InstallNamespace)); err == nil {
		for _, p := range pods.Items {
			fmt.Fprintf(w, "--- Pod %s: phase %s\n", p.Name, p.Status.Phase)
		}
	}
	if events, err := clientset.CoreV1().Events(m.InstallNamespace).List(ctx, metav1.ListOptions{}); err == nil {
		fmt.Fprintln(w, "--- Events")
		for _, e := range events.Items {
			fmt.Fprintf(w, "%s %s %s/%s: %s\n", e.LastTimestamp.Format(time.RFC3339), e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
		}
	}
	for _, p := range []*devkit.Process{olmProc, catalogProc} {
		if p != nil {
			fmt.Fprintf(w, "--- Last lines of %s\n%s\n", p.LogPath, devkit.LogTail(p.LogPath, 40))
		}
	}
	fmt.Fprintln(w, "===== End of diagnostics")
}
