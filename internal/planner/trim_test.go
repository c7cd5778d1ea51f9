package planner

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// kubeletStatus fills the pod's metadata and status as the API server and a kubelet do, with all
// the fields Trim drops: managedFields, the template's labels and annotations, an owner that is
// not the controller, every condition with its times, each container's image, IDs, readiness and
// restarts. containers are the states of the container "main", after an init container that
// completed.
func kubeletStatus(pod corev1.Pod, phase corev1.PodPhase, main corev1.ContainerState) corev1.Pod {
	pod.ResourceVersion = "42"
	pod.CreationTimestamp = *at(-time.Second)
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}}
	pod.Labels["app"] = "backup"
	pod.Annotations["kubectl.kubernetes.io/default-container"] = "main"
	pod.OwnerReferences = append(pod.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "cm-uid"})
	pod.Spec.NodeName = "node-1"
	started := *at(0)
	pod.Status = corev1.PodStatus{
		Phase: phase, StartTime: &started, HostIP: "10.0.0.1", PodIP: "10.1.0.7", QOSClass: corev1.PodQOSBestEffort,
		PodIPs: []corev1.PodIP{{IP: "10.1.0.7"}}, HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: started},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: started},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
		},
		InitContainerStatuses: []corev1.ContainerStatus{{
			Name: "init", Image: "busybox:1.36", ImageID: "sha256:init", ContainerID: "containerd://init", Ready: true,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: started, ContainerID: "containerd://init",
			}},
		}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "main", Image: "busybox:1.36", ImageID: "sha256:main", ContainerID: "containerd://main", Started: ptr.To(true),
			RestartCount: 1, State: main,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 1, Reason: "Error", Message: "earlier attempt", StartedAt: started, FinishedAt: started,
			}},
		}},
	}
	return pod
}

func terminated(code int32, reason string, end time.Duration) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, Message: "the container's last words", Signal: 9,
		StartedAt: *at(0), FinishedAt: *at(end), ContainerID: "containerd://main",
	}}
}

// TestTrimKeepsDecisions holds Trim to what the planner reads: for pods as the builder makes them
// and a kubelet reports them, in every state a decision tells apart (waiting to be scheduled,
// waiting for an image, in a crash loop, running, succeeded, failed with an exit code, evicted before or after it started,
// force-deleted, succeeded handing over a result to its verification, short or cut,
// finished runs of other items, a rogue pod, one without the finalizer), the decision on the
// trimmed pods is the decision on the full ones, and so are the facts the controllers read.
func TestTrimKeepsDecisions(t *testing.T) {
	g := newGroup("a", "b", "c")
	g.Spec.PendingTimeout = "1m"
	g.Spec.Verify = &v1alpha1.Verify{OaatType: "checker"}
	itemStatus(g, "b").LastSuccess = at(-time.Hour)
	running(t, g, "a", 5, at(0))
	pod := func(item string, run int64, phase corev1.PodPhase, main corev1.ContainerState) corev1.Pod {
		return kubeletStatus(runPod(t, g, item, run, phase), phase, main)
	}
	unscheduled := pod("a", 5, corev1.PodPending, corev1.ContainerState{})
	unscheduled.Status.ContainerStatuses, unscheduled.Status.InitContainerStatuses = nil, nil
	unscheduled.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 Insufficient cpu.", LastTransitionTime: *at(0),
	}}
	pulling := pod("a", 5, corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}})
	pulling.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{}
	evicted := pod("a", 5, corev1.PodFailed, terminated(137, "Error", 8*time.Second))
	evicted.Status.Reason, evicted.Status.Message = "Evicted", "The node was low on resource: memory."
	evicted.Status.Conditions = append(evicted.Status.Conditions, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", LastTransitionTime: *at(7 * time.Second),
	})
	evictedEarly := pod("a", 5, corev1.PodFailed, corev1.ContainerState{})
	evictedEarly.Status.ContainerStatuses, evictedEarly.Status.InitContainerStatuses = nil, nil
	evictedEarly.Status.Reason, evictedEarly.Status.Message = "Evicted", "The node was low on resource: ephemeral-storage."
	crashLoop := pod("a", 5, corev1.PodRunning, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}})
	crashLoop.Status.InitContainerStatuses = nil
	gone := pod("a", 5, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *at(0)}})
	gone.DeletionTimestamp, gone.DeletionGracePeriodSeconds = at(5*time.Second), ptr.To[int64](0)
	gone.Status.Conditions = evicted.Status.Conditions
	handingOver := func(message string) corev1.Pod {
		p := pod("a", 5, corev1.PodSucceeded, terminated(0, "Completed", 9*time.Second))
		p.Status.ContainerStatuses[0].State.Terminated.Message = message
		return p
	}
	oldB := pod("b", 3, corev1.PodSucceeded, terminated(0, "Completed", -50*time.Minute))
	oldC := pod("c", 4, corev1.PodFailed, terminated(2, "Error", -40*time.Minute))
	oldC.Finalizers = nil
	rogue := pod("c", 9, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *at(0)}})
	rogue.OwnerReferences = nil
	others := []corev1.Pod{oldB, oldC}

	cases := map[string][]corev1.Pod{
		"unscheduled":               append([]corev1.Pod{unscheduled}, others...),
		"image pull":                append([]corev1.Pod{pulling}, others...),
		"running":                   append([]corev1.Pod{pod("a", 5, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *at(0)}})}, others...),
		"succeeded":                 append([]corev1.Pod{pod("a", 5, corev1.PodSucceeded, terminated(0, "Completed", 9*time.Second))}, others...),
		"succeeded with a result":   append([]corev1.Pod{handingOver("snapshot 1a2b3c")}, others...),
		"succeeded with a long one": append([]corev1.Pod{handingOver(strings.Repeat("x", 3*v1alpha1.MaxSourceResult))}, others...),
		"failed":                    append([]corev1.Pod{pod("a", 5, corev1.PodFailed, terminated(137, "OOMKilled", 9*time.Second))}, others...),
		"evicted":                   append([]corev1.Pod{evicted}, others...),
		"evicted early":             append([]corev1.Pod{evictedEarly}, others...),
		"crash loop":                append([]corev1.Pod{crashLoop}, others...),
		"force-deleted":             append([]corev1.Pod{gone}, others...),
		"with a rogue pod":          append([]corev1.Pod{pod("a", 5, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}), rogue}, others...),
	}
	byName := cmp.Comparer(func(a, b *corev1.Pod) bool {
		return (a == nil) == (b == nil) && (a == nil || a.Name == b.Name && a.UID == b.UID)
	})
	for name, pods := range cases {
		for _, now := range []time.Duration{10 * time.Second, 2 * time.Minute} {
			trimmed := make([]corev1.Pod, len(pods))
			for i := range pods {
				trimmed[i] = *Trim(&pods[i])
				if got, want := facts(&trimmed[i]), facts(&pods[i]); got != want {
					t.Errorf("%s: pod %s: facts of the trimmed pod %+v, of the full pod %+v", name, pods[i].Name, got, want)
				}
			}
			full := Decide(withVerifyType(input(g.DeepCopy(), now, pods...)))
			cut := Decide(withVerifyType(input(g.DeepCopy(), now, trimmed...)))
			if diff := cmp.Diff(full, cut, byName, cmpopts.IgnoreUnexported(Plan{})); diff != "" {
				t.Errorf("%s at %s: the decision on trimmed pods differs (-full +trimmed):\n%s", name, now, diff)
			}
			if !reflect.DeepEqual(full.Create, cut.Create) {
				t.Errorf("%s at %s: the pod to create differs", name, now)
			}
		}
	}
}

// podFacts are what the controllers and the planner read of a single pod.
type podFacts struct {
	terminal, gone, disrupted, started, tracked bool
	run                                         int64
	waitingFor, item                            string
	controller                                  types.UID
}

func facts(pod *corev1.Pod) podFacts {
	f := podFacts{
		terminal: podbuild.Terminal(pod), gone: podbuild.Gone(pod), disrupted: podbuild.Disrupted(pod), started: podbuild.Started(pod), tracked: podbuild.Tracked(pod),
		run: podbuild.RunNumber(pod), waitingFor: waitingFor(pod), item: pod.Annotations[v1alpha1.AnnotationItem],
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		f.controller = ref.UID
	}
	return f
}

// withVerifyType gives the input spec.verify's OaatType (verifyType).
func withVerifyType(in Input) Input {
	in.VerifyType = verifyType()
	return in
}
