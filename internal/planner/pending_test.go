package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// withStatuses is the pod with these init container and container statuses.
func withStatuses(pod corev1.Pod, init, main []corev1.ContainerStatus) corev1.Pod {
	pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses = init, main
	return pod
}

func waiting(name, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func TestWaitingFor(t *testing.T) {
	g := newGroup("a")
	pending := runPod(t, g, "a", 1, corev1.PodPending)
	unschedulable := pending
	unschedulable.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 node(s) had volume node affinity conflict.",
	}}
	runningInit := corev1.ContainerStatus{Name: "prepare", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	endedInit := corev1.ContainerStatus{Name: "prepare", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}
	tests := []struct {
		name        string
		pod         corev1.Pod
		wantStarted bool
		wantWaiting string
	}{
		{name: "no status yet", pod: pending, wantWaiting: "its status names no reason"},
		{name: "unschedulable", pod: unschedulable,
			wantWaiting: "not scheduled: Unschedulable 0/3 nodes are available: 3 node(s) had volume node affinity conflict."},
		{name: "volumes not mounted", pod: withStatuses(pending, []corev1.ContainerStatus{waiting("prepare", "PodInitializing")},
			[]corev1.ContainerStatus{waiting("main", "ContainerCreating"), waiting("sidecar", "")}),
			wantWaiting: "waiting: prepare: PodInitializing, main: ContainerCreating"},
		{name: "image not pulled", pod: withStatuses(pending, nil, []corev1.ContainerStatus{waiting("main", "ImagePullBackOff")}),
			wantWaiting: "waiting: main: ImagePullBackOff"},
		{name: "an init container runs", pod: withStatuses(pending, []corev1.ContainerStatus{runningInit}, []corev1.ContainerStatus{waiting("main", "PodInitializing")}),
			wantStarted: true, wantWaiting: "waiting: main: PodInitializing"},
		{name: "an init container ended", pod: withStatuses(pending, []corev1.ContainerStatus{endedInit}, nil),
			wantStarted: true, wantWaiting: "its status names no reason"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []any{podbuild.Started(&tt.pod), waitingFor(&tt.pod)}
			if diff := cmp.Diff([]any{tt.wantStarted, tt.wantWaiting}, got); diff != "" {
				t.Errorf("Started, waitingFor (-want +got):\n%s", diff)
			}
		})
	}
	if podbuild.Started(nil) {
		t.Error("podbuild.Started(nil) = true: a pod not seen yet has not started")
	}
}
