package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
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

func TestStartedAndWaitingFor(t *testing.T) {
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

// t0 is 12:00 UTC.
func TestDecidePendingTimeout(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.PendingTimeout = "2m"
	g.Spec.RunTimeout = "10m"
	running(t, g, "a", 1, at(0))
	pod := withStatuses(runPod(t, g, "a", 1, corev1.PodPending), nil, []corev1.ContainerStatus{waiting("main", "ContainerCreating")})

	// Before the deadline: a wake-up at it.
	checkPlan(t, Plan{Status: runningStatus(g, "a", 1, 0, time.Minute, v1alpha1.ItemStatus{Name: "b"}), RequeueAfter: time.Minute},
		Decide(input(g, time.Minute, pod)))

	// A pod whose container started is left to runTimeout, whatever its phase says.
	started := withStatuses(pod, nil, []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}})
	checkPlan(t, Plan{Status: runningStatus(g, "a", 1, 0, 3*time.Minute, v1alpha1.ItemStatus{Name: "b"}), RequeueAfter: 7 * time.Minute},
		Decide(input(g, 3*time.Minute, started)))

	// At the deadline the run stops, its pod deleted with an event that says what it waits for.
	p := Decide(input(g, 2*time.Minute, pod))
	want := runningStatus(g, "a", 1, 0, 2*time.Minute, v1alpha1.ItemStatus{Name: "b"})
	want.CurrentRun.StopReason = v1alpha1.ReasonPendingTimeout
	checkPlan(t, Plan{Status: want, Delete: []Deletion{{Pod: &pod, Event: &Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunStopping,
		Message: `Stopping item "a" in pod ` + pod.Name + ": no container started within spec.pendingTimeout 2m (waiting: main: ContainerCreating)"}}}}, p)

	// A pass whose cache still shows the pod undeleted deletes it again, without a second event.
	checkPlan(t, Plan{Status: applied(g, p).Status, Delete: []Deletion{{Pod: &pod}}},
		Decide(input(applied(g, p), 2*time.Minute+time.Second, pod)))

	// Once it is gone the run is a failure that says why, and the next item starts.
	now := 2*time.Minute + 2*time.Second
	want = runningStatus(g, "b", 2, now, 2*time.Minute, v1alpha1.ItemStatus{Name: "a", LastStarted: at(0), LastFailure: at(now), FailureCount: 1,
		LastReason: v1alpha1.ReasonPendingTimeout, LastPodName: pod.Name,
		NextEligibleAt: at(now + 10*time.Minute), WaitReason: v1alpha1.WaitCoolingOff})
	want.Items[0], want.Items[1] = want.Items[1], want.Items[0]
	checkPlan(t, Plan{
		Status: want,
		Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed, Message: `Item "a" failed in pod ` + pod.Name +
			": PendingTimeout, stopped because no container of its pod started within spec.pendingTimeout"}},
		Create:   newPod(t, g, "b", 2),
		Finished: []Outcome{{Item: "a", Result: ResultFailed, Duration: now}},
	}, Decide(input(applied(g, p), now)))
}
