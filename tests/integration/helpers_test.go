package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// Names of the fixtures.
const (
	typeName      = "worker"
	initContainer = "prepare"
	mainContainer = "main"
	sideContainer = "sidecar"
)

// newOaatType returns an OaatType whose pod has an init container and two containers; the main
// container's args name the item through {{oaat_item}}.
func newOaatType(name string) *v1alpha1.OaatType {
	t := support.Type(ns, name, corev1.PodSpec{
		InitContainers: []corev1.Container{{
			Name: initContainer, Image: "busybox",
			Command: []string{"sh", "-c", "echo preparing $(OAAT_ITEM)"},
		}},
		Containers: []corev1.Container{
			{
				Name: mainContainer, Image: "busybox",
				Command: []string{"sh", "-c"},
				Args:    []string{"echo processing {{oaat_item}}"},
			},
			{
				Name: sideContainer, Image: "busybox",
				Args: []string{"sleep", "1"},
				Env:  []corev1.EnvVar{{Name: "FOO", Value: "bar"}},
			},
		},
	})
	t.Spec.Template.Labels = map[string]string{"app": "worker"}
	return t
}

// newGroup returns an OaatGroup of the fixture OaatType with frequency 1h.
func newGroup(name string, items ...string) *v1alpha1.OaatGroup {
	return support.Group(ns, name, typeName, items...).Obj()
}

func create(ctx context.Context, objs ...client.Object) {
	for _, obj := range objs {
		ExpectWithOffset(1, k8sClient.Create(ctx, obj)).To(Succeed())
	}
}

// getGroup reads the group from the API server.
func getGroup(ctx context.Context, g Gomega, name string) *v1alpha1.OaatGroup {
	group := &v1alpha1.OaatGroup{}
	g.ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, group)).To(Succeed())
	return group
}

// The status and pod helpers of package support, which the end-to-end suite shares, under the
// names the tests use.
var (
	itemStatus = support.ItemStatus
	itemNames  = support.ItemNames
	podNames   = support.PodNames
	isTerminal = podbuild.Terminal
)

func condition(group *v1alpha1.OaatGroup, condType string) *metav1.Condition {
	return meta.FindStatusCondition(group.Status.Conditions, condType)
}

// expectCondition checks the status and, if given, the reason of a condition of the group.
func expectCondition(g Gomega, group *v1alpha1.OaatGroup, condType string, status metav1.ConditionStatus, reason v1alpha1.Reason) {
	c := condition(group, condType)
	g.ExpectWithOffset(1, c).NotTo(BeNil(), "condition %s", condType)
	g.ExpectWithOffset(1, c.Status).To(Equal(status), "condition %s: %s", condType, c.Message)
	if reason != "" {
		g.ExpectWithOffset(1, c.Reason).To(Equal(string(reason)), "condition %s: %s", condType, c.Message)
	}
	g.ExpectWithOffset(1, c.ObservedGeneration).To(Equal(group.Generation))
}

// podsOf lists the pods of the group, live and finished.
func podsOf(ctx context.Context, group string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	err := k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelGroup: group})
	return pods.Items, err
}

// livePodsOf lists the pods of the group that have not ended.
func livePodsOf(ctx context.Context, group string) ([]corev1.Pod, error) {
	pods, err := podsOf(ctx, group)
	var live []corev1.Pod
	for _, p := range pods {
		if !isTerminal(&p) && p.Labels[labelTestPod] == "" {
			live = append(live, p)
		}
	}
	return live, err
}

// waitForLivePod waits until the group has exactly one live pod, other than those named in
// previous, and returns it.
func waitForLivePod(ctx context.Context, group string, previous ...string) *corev1.Pod {
	GinkgoHelper()
	return waitForLivePodWithin(ctx, timeout, group, previous...)
}

// waitForLivePodWithin is waitForLivePod with a timeout of its own.
func waitForLivePodWithin(ctx context.Context, within time.Duration, group string, previous ...string) *corev1.Pod {
	GinkgoHelper()
	var pod *corev1.Pod
	Eventually(func(g Gomega) {
		live, err := livePodsOf(ctx, group)
		g.Expect(err).NotTo(HaveOccurred())
		// Names only: a failure message that prints whole pods takes long to build.
		g.Expect(podNames(live)).To(HaveLen(1), "live pods of group %s", group)
		g.Expect(previous).NotTo(ContainElement(live[0].Name))
		pod = &live[0]
	}).WithContext(ctx).WithTimeout(within).Should(Succeed())
	return pod
}

// expectNoLivePod checks for a while that the group has no live pod.
func expectNoLivePod(ctx context.Context, group string, during time.Duration) {
	ConsistentlyWithOffset(1, func(g Gomega) {
		live, err := livePodsOf(ctx, group)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(podNames(live)).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(during).Should(Succeed())
}

// updatePodStatus plays the kubelet: it writes the pod's status through its status subresource.
func updatePodStatus(ctx context.Context, name string, mutate func(*corev1.Pod)) {
	ExpectWithOffset(2, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return err
		}
		mutate(pod)
		return k8sClient.Status().Update(ctx, pod)
	})).To(Succeed())
}

// markRunning makes the pod Running: its init containers completed, its containers started.
func markRunning(ctx context.Context, name string) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	updatePodStatus(ctx, name, func(pod *corev1.Pod) {
		pod.Status.Phase = corev1.PodRunning
		pod.Status.StartTime = &now
		pod.Status.InitContainerStatuses = nil
		for _, c := range pod.Spec.InitContainers {
			pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, terminatedStatus(c, 0, "Completed", now, now))
		}
		pod.Status.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, Ready: true, Started: ptr.To(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
	})
}

// finishPod ends the pod: the main container exits with exitCode and reason, the others with 0,
// all at the returned time (whole seconds, as the API stores it). The phase is Succeeded for
// exit code 0, else Failed.
func finishPod(ctx context.Context, name string, exitCode int32, reason string) metav1.Time {
	return finishPodAt(ctx, name, exitCode, reason, metav1.NewTime(time.Now().Truncate(time.Second)))
}

// finishPodAt is finishPod with the containers finished at finishedAt, as a kubelet would have
// reported while no manager ran.
func finishPodAt(ctx context.Context, name string, exitCode int32, reason string, finishedAt metav1.Time) metav1.Time {
	return finishPodWith(ctx, name, exitCode, reason, finishedAt, func(*corev1.ContainerStateTerminated) {})
}

// finishPodWith is finishPodAt, with mainState changing the main container's terminated state
// in the same write.
func finishPodWith(ctx context.Context, name string, exitCode int32, reason string, finishedAt metav1.Time,
	mainState func(*corev1.ContainerStateTerminated)) metav1.Time {
	updatePodStatus(ctx, name, func(pod *corev1.Pod) {
		if pod.Status.StartTime == nil {
			pod.Status.StartTime = &finishedAt
		}
		started := *pod.Status.StartTime
		pod.Status.Phase = corev1.PodSucceeded
		if exitCode != 0 {
			pod.Status.Phase = corev1.PodFailed
		}
		pod.Status.InitContainerStatuses = nil
		for _, c := range pod.Spec.InitContainers {
			pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, terminatedStatus(c, 0, "Completed", started, started))
		}
		pod.Status.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			code, why := int32(0), "Completed"
			if c.Name == mainContainer {
				code, why = exitCode, reason
			}
			status := terminatedStatus(c, code, why, started, finishedAt)
			if c.Name == mainContainer {
				mainState(status.State.Terminated)
			}
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, status)
		}
	})
	return finishedAt
}

func terminatedStatus(c corev1.Container, exitCode int32, reason string, started, finished metav1.Time) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, Started: ptr.To(false),
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, StartedAt: started, FinishedAt: finished,
		}},
	}
}

// groupEvents lists the events.k8s.io/v1 events about the group with the given reason.
func groupEvents(ctx context.Context, g Gomega, group string, reason v1alpha1.Reason) []eventsv1.Event {
	return eventsAbout(ctx, g, "OaatGroup", group, reason)
}

// eventsAbout are the events of the test namespace about the object of that kind and name, with
// the reason.
func eventsAbout(ctx context.Context, g Gomega, kind, name string, reason v1alpha1.Reason) []eventsv1.Event {
	events := &eventsv1.EventList{}
	g.ExpectWithOffset(1, k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	var found []eventsv1.Event
	for _, e := range events.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == string(reason) {
			found = append(found, e)
		}
	}
	return found
}

// occurrences counts the occurrences the events stand for: the event recorder folds repeated
// events about the same object and reason into one event with a series.
func occurrences(events []eventsv1.Event) int {
	n := 0
	for _, e := range events {
		if e.Series != nil {
			n += int(e.Series.Count)
		} else {
			n++
		}
	}
	return n
}

// expectEvent waits for an event of the given type and reason about the group.
func expectEvent(ctx context.Context, group, eventType string, reason v1alpha1.Reason) {
	EventuallyWithOffset(1, func(g Gomega) {
		events := groupEvents(ctx, g, group, reason)
		g.Expect(events).NotTo(BeEmpty(), "no %s event about group %s", reason, group)
		g.Expect(events[0].Type).To(Equal(eventType))
	}).WithContext(ctx).Should(Succeed())
}

func keyOf(obj client.Object) client.ObjectKey {
	return client.ObjectKeyFromObject(obj)
}

// updateGroupSpec changes the group's spec, retrying on conflicts with the operator's status
// writes.
func updateGroupSpec(ctx context.Context, name string, mutate func(*v1alpha1.OaatGroupSpec)) {
	ExpectWithOffset(1, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		group := &v1alpha1.OaatGroup{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, group); err != nil {
			return err
		}
		mutate(&group.Spec)
		return k8sClient.Update(ctx, group)
	})).To(Succeed())
}

// otherItem returns the item of a two-item group that is not item.
func otherItem(items [2]string, item string) string {
	if item == items[0] {
		return items[1]
	}
	return items[0]
}
