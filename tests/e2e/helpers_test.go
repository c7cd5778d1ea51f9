//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The annotations by which kwok plays out a pod, under the names the tests use.
const (
	annotationTestDuration = support.KwokDurationAnnotation
	annotationTestExitCode = support.KwokExitCodeAnnotation
)

// newOaatType returns an OaatType whose item pods run for duration and exit with exitCode.
func newOaatType(name, duration string, exitCode int) *v1alpha1.OaatType {
	return support.KwokType(ns, name, duration, exitCode)
}

// newGroup returns an OaatGroup of the OaatType with frequency 1h and no failure cool-off.
func newGroup(name, oaatType string, items ...string) *v1alpha1.OaatGroup {
	return support.Group(ns, name, oaatType, items...).Obj()
}

// newRoguePod returns a pod that carries the group's label but is not the operator's: kwok would
// keep it Running for 60 s.
func newRoguePod(name, group string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: ns,
			Labels:    map[string]string{v1alpha1.LabelGroup: group, labelTestPod: "rogue"},
			Annotations: map[string]string{
				annotationTestDuration: "60s",
				annotationTestExitCode: "0",
			},
		},
		Spec: *support.OnKwokNodes(&corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "example.invalid/rogue:latest"}},
		}),
	}
}

func create(ctx context.Context, objs ...client.Object) {
	GinkgoHelper()
	for _, obj := range objs {
		Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "creating %T %s", obj, obj.GetName())
	}
}

// deleteGroup deletes the group of the test's namespace (and returns once the API server has it
// marked for deletion; its finalizer may keep it a while).
func deleteGroup(ctx context.Context, name string, opts ...client.DeleteOption) {
	GinkgoHelper()
	group := &v1alpha1.OaatGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	Expect(k8sClient.Delete(ctx, group, opts...)).To(Succeed(), "deleting group %s", name)
}

// getGroup reads the group from the API server.
func getGroup(ctx context.Context, g Gomega, name string) *v1alpha1.OaatGroup {
	group := &v1alpha1.OaatGroup{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, group)).To(Succeed())
	return group
}

// updateGroup changes the group's spec, retrying on conflicts with the operator's status writes.
func updateGroup(ctx context.Context, name string, mutate func(*v1alpha1.OaatGroup)) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		group := &v1alpha1.OaatGroup{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, group); err != nil {
			return err
		}
		mutate(group)
		return k8sClient.Update(ctx, group)
	})).To(Succeed())
}

// updateGroupStatus writes the group's status through its status subresource, retrying on
// conflicts with the operator's own writes.
func updateGroupStatus(ctx context.Context, name string, mutate func(*v1alpha1.OaatGroupStatus)) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		group := &v1alpha1.OaatGroup{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, group); err != nil {
			return err
		}
		mutate(&group.Status)
		return k8sClient.Status().Update(ctx, group)
	})).To(Succeed())
}

// updateType changes an OaatType; the next pod of its groups is built from the new template.
func updateType(ctx context.Context, name string, mutate func(*v1alpha1.OaatType)) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ot := &v1alpha1.OaatType{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ot); err != nil {
			return err
		}
		mutate(ot)
		return k8sClient.Update(ctx, ot)
	})).To(Succeed())
}

// The status and pod helpers of package support, which the integration suite shares, under the
// names the tests use.
var (
	itemStatus = support.ItemStatus
	itemNames  = support.ItemNames
	podNames   = support.PodNames
	isTerminal = podbuild.Terminal
)

// itemOf returns the status entry of the item, failing g while the group has none yet.
func itemOf(g Gomega, group *v1alpha1.OaatGroup, item string) *v1alpha1.ItemStatus {
	it := itemStatus(group, item)
	g.Expect(it).NotTo(BeNil(), "group %s has no status entry for item %q yet", group.Name, item)
	return it
}

// expectCondition checks the status and reason of a condition of the group.
func expectCondition(g Gomega, group *v1alpha1.OaatGroup, condType string, status metav1.ConditionStatus, reason v1alpha1.Reason) {
	c := meta.FindStatusCondition(group.Status.Conditions, condType)
	g.Expect(c).NotTo(BeNil(), "condition %s", condType)
	g.Expect(c.Status).To(Equal(status), "condition %s: %s", condType, c.Message)
	g.Expect(c.Reason).To(Equal(string(reason)), "condition %s: %s", condType, c.Message)
}

// podsOf lists the pods that carry the group's label, live and finished.
func podsOf(ctx context.Context, g Gomega, group string) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelGroup: group})).To(Succeed())
	return pods.Items
}

// getPod reads a pod; nil when it does not exist.
func getPod(ctx context.Context, g Gomega, name string) *corev1.Pod {
	pod := &corev1.Pod{}
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	return pod
}

// waitForRunningPod waits until the group has exactly one live pod of the operator, other than
// those named in previous, and that pod is Running; it returns the pod.
func waitForRunningPod(ctx context.Context, group string, previous ...string) *corev1.Pod {
	GinkgoHelper()
	var running *corev1.Pod
	Eventually(func(g Gomega) {
		var live []corev1.Pod
		for _, p := range podsOf(ctx, g, group) {
			if !isTerminal(&p) && p.Labels[labelTestPod] == "" {
				live = append(live, p)
			}
		}
		g.Expect(live).To(HaveLen(1), "live pods of group %s: %v", group, podNames(live))
		g.Expect(previous).NotTo(ContainElement(live[0].Name))
		g.Expect(live[0].Status.Phase).To(Equal(corev1.PodRunning), "pod %s", live[0].Name)
		running = &live[0]
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "a running pod of group %s", group)
	return running
}

// groupEvents returns the events about the group with one of the reasons.
func groupEvents(ctx context.Context, g Gomega, group string, reasons ...v1alpha1.Reason) []eventsv1.Event {
	list, err := clientset.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	var found []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind != "OaatGroup" || e.Regarding.Name != group {
			continue
		}
		for _, r := range reasons {
			if e.Reason == string(r) {
				found = append(found, e)
			}
		}
	}
	return found
}

// outcomeRecords counts the RunSucceeded and RunFailed events about the group that name the pod,
// each event counted as often as its series says it happened.
func outcomeRecords(ctx context.Context, g Gomega, group, pod string) (succeeded, failed int) {
	return countOutcomes(ctx, g, group, func(note string) bool { return strings.Contains(note, " in pod "+pod+":") })
}

// countOutcomes counts the RunSucceeded and RunFailed events about the group whose note matches,
// each event counted as often as its series says it happened.
func countOutcomes(ctx context.Context, g Gomega, group string, matches func(note string) bool) (succeeded, failed int) {
	for _, e := range groupEvents(ctx, g, group, v1alpha1.ReasonRunSucceeded, v1alpha1.ReasonRunFailed) {
		if !matches(e.Note) {
			continue
		}
		n := 1
		if e.Series != nil {
			n = int(e.Series.Count)
		}
		if e.Reason == string(v1alpha1.ReasonRunSucceeded) {
			succeeded += n
		} else {
			failed += n
		}
	}
	return succeeded, failed
}

// dumpDiagnostics writes what a failed test needs to be understood: the groups, pods and events
// of its namespace, what the watcher saw, and the end of the operator's log.
func dumpDiagnostics(ctx context.Context, namespace string) {
	// The spec's context may be the reason for the failure.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	w := GinkgoWriter
	fmt.Fprintf(w, "\n===== Diagnostics of namespace %s\n", namespace)
	groups := &v1alpha1.OaatGroupList{}
	if err := k8sClient.List(ctx, groups, client.InNamespace(namespace)); err != nil {
		fmt.Fprintf(w, "listing groups: %v\n", err)
	}
	for _, group := range groups.Items {
		out, _ := json.MarshalIndent(map[string]any{"spec": group.Spec, "status": group.Status}, "", "  ")
		fmt.Fprintf(w, "--- OaatGroup %s (generation %d)\n%s\n", group.Name, group.Generation, out)
	}
	pods := &corev1.PodList{}
	if err := k8sClient.List(ctx, pods, client.InNamespace(namespace)); err != nil {
		fmt.Fprintf(w, "listing pods: %v\n", err)
	}
	fmt.Fprintln(w, "--- Pods")
	for _, p := range pods.Items {
		deleting := ""
		if p.DeletionTimestamp != nil {
			deleting = " deleting since " + p.DeletionTimestamp.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s group=%s item=%s run=%s phase=%s created=%s%s\n", p.Name, p.Labels[v1alpha1.LabelGroup],
			p.Annotations[v1alpha1.AnnotationItem], p.Labels[v1alpha1.LabelRun], p.Status.Phase,
			p.CreationTimestamp.Format(time.RFC3339), deleting)
	}
	fmt.Fprintln(w, "--- Events")
	if events, err := clientset.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{}); err != nil {
		fmt.Fprintf(w, "listing events: %v\n", err)
	} else {
		for _, e := range events.Items {
			count := 1
			if e.Series != nil {
				count = int(e.Series.Count)
			}
			fmt.Fprintf(w, "%s %s %s/%s x%d: %s\n", e.EventTime.Format(time.RFC3339Nano), e.Reason,
				e.Regarding.Kind, e.Regarding.Name, count, e.Note)
		}
	}
	fmt.Fprintf(w, "--- Pods seen by the watcher\n%s", tracker.Describe(namespace))
	if prom != nil {
		fmt.Fprintf(w, "--- Last lines of Prometheus's log %s\n%s\n", prom.logPath, devkit.LogTail(prom.logPath, 10))
	}
	fmt.Fprintf(w, "--- Last lines of the operator's log %s\n%s\n===== End of diagnostics\n",
		shared.OperatorLog, devkit.LogTail(shared.OperatorLog, 80))
}

// itemsOf returns the items of the records, in order.
func itemsOf(recs []support.PodRecord) []string {
	items := make([]string, 0, len(recs))
	for _, r := range recs {
		items = append(items, r.Item)
	}
	return items
}
