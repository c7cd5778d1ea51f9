package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
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
			if got := Started(&tt.pod); got != tt.wantStarted {
				t.Errorf("Started() = %v, want %v", got, tt.wantStarted)
			}
			if got := waitingFor(&tt.pod); got != tt.wantWaiting {
				t.Errorf("waitingFor() = %q\nwant %q", got, tt.wantWaiting)
			}
		})
	}
	if Started(nil) {
		t.Error("Started(nil) = true: a pod not seen yet has not started")
	}
}

// t0 is 12:00 UTC.
func TestDecidePendingTimeout(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.PendingTimeout = "2m"
	g.Spec.RunTimeout = "10m"
	running(t, g, "a", 1, at(0))
	pod := withStatuses(runPod(t, g, "a", 1, corev1.PodPending), nil, []corev1.ContainerStatus{waiting("main", "ContainerCreating")})

	p := Decide(input(g, time.Minute, pod))
	if len(p.Delete) != 0 || p.Status.CurrentRun.StopReason != "" || p.RequeueAfter != time.Minute {
		t.Fatalf("before the deadline: deletes %v, stopReason %q, requeueAfter %v", deleted(p), p.Status.CurrentRun.StopReason, p.RequeueAfter)
	}

	// A pod whose container started is left to runTimeout, whatever its phase says.
	started := withStatuses(pod, nil, []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}})
	if p := Decide(input(g, 3*time.Minute, started)); len(p.Delete) != 0 || p.Status.CurrentRun.StopReason != "" || p.RequeueAfter != 7*time.Minute {
		t.Fatalf("a started pod: deletes %v, stopReason %q, requeueAfter %v", deleted(p), p.Status.CurrentRun.StopReason, p.RequeueAfter)
	}

	p = Decide(input(g, 2*time.Minute, pod))
	if p.Status.CurrentRun == nil || p.Status.CurrentRun.StopReason != v1alpha1.ReasonPendingTimeout {
		t.Fatalf("at the deadline currentRun = %+v", p.Status.CurrentRun)
	}
	if !slices.Equal(deleted(p), []string{pod.Name + " rogue=true"}) {
		t.Fatalf("at the deadline deletes %v", deleted(p))
	}
	want := Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunStopping, Message: `Stopping item "a" in pod ` + pod.Name +
		": no container started within spec.pendingTimeout 2m (waiting: main: ContainerCreating)"}
	if *p.Delete[0].Event != want {
		t.Fatalf("event %+v\nwant %+v", *p.Delete[0].Event, want)
	}

	gone := Decide(input(applied(g, p), 2*time.Minute+2*time.Second))
	a := planItem(t, gone, "a")
	if a.LastReason != v1alpha1.ReasonPendingTimeout || a.FailureCount != 1 || a.LastFailure == nil || a.LastSuccess != nil {
		t.Fatalf("after the stop item a = %+v", a)
	}
	if len(gone.Finished) != 1 || gone.Finished[0].Result != ResultFailed {
		t.Fatalf("finished = %+v", gone.Finished)
	}
	if !slices.ContainsFunc(gone.Events, func(e Event) bool {
		return e.Reason == v1alpha1.ReasonRunFailed && e.Message == `Item "a" failed in pod `+pod.Name+
			": PendingTimeout, stopped because no container of its pod started within spec.pendingTimeout"
	}) {
		t.Fatalf("no RunFailed event saying why: %+v", gone.Events)
	}
	if gone.Create == nil || gone.Status.CurrentRun.Item != "b" {
		t.Fatalf("the next item does not start once the stopped pod is gone: %+v", gone.Status.CurrentRun)
	}
}
