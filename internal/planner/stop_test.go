package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// stopCase is one pass of stopCurrentRun's table: the plan decided at now (after t0, 12:00 UTC)
// for the group, whose run 1 of item "a" started at t0, seeing the pods.
type stopCase struct {
	name  string
	group *v1alpha1.OaatGroup
	now   time.Duration
	pods  []corev1.Pod
	want  Plan
}

// runningGroup is the group of the items, with the spec set, whose run 1 of item "a" runs since t0.
func runningGroup(t *testing.T, set func(*v1alpha1.OaatGroupSpec), items ...string) *v1alpha1.OaatGroup {
	t.Helper()
	g := newGroup(items...)
	set(&g.Spec)
	running(t, g, "a", 1, at(0))
	return g
}

// stopping is g as the pass at decided that stopped its run for reason left it: the status of
// that pass, with the other items' entries.
func stopping(g *v1alpha1.OaatGroup, reason v1alpha1.StopReason, decided time.Duration, others ...v1alpha1.ItemStatus) *v1alpha1.OaatGroup {
	next := g.DeepCopy()
	next.Status = runningStatus(g, "a", 1, 0, decided, others...)
	next.Status.CurrentRun.StopReason = reason
	return next
}

// stopEventOf is the RunStopping event of the pod's stop.
func stopEventOf(pod corev1.Pod, eventType, why string) *Event {
	return &Event{Type: eventType, Reason: v1alpha1.ReasonRunStopping, Message: `Stopping item "a" in pod ` + pod.Name + ": " + why}
}

// runTimeoutCases are the passes of a run, its pod in phase, that outlives spec.runTimeout 5m.
func runTimeoutCases(t *testing.T, phase corev1.PodPhase) []stopCase {
	t.Helper()
	g := runningGroup(t, func(s *v1alpha1.OaatGroupSpec) { s.RunTimeout = "5m" }, "a", "b")
	pod := runPod(t, g, "a", 1, phase)
	deleting := pod.DeepCopy()
	deleting.DeletionTimestamp = at(5 * time.Minute)
	b := v1alpha1.ItemStatus{Name: "b"}
	stopped := stopping(g, v1alpha1.StopDeadlineExceeded, 5*time.Minute, b)
	atDeadline := runningStatus(g, "a", 1, 0, 5*time.Minute, b)
	atDeadline.CurrentRun.StopReason = v1alpha1.StopDeadlineExceeded
	gone := 5*time.Minute + 2*time.Second
	next := runningStatus(g, "b", 2, gone, 5*time.Minute, v1alpha1.ItemStatus{Name: "a", LastStarted: at(0), LastFailure: at(gone),
		FailureCount: 1, LastReason: string(v1alpha1.ReasonDeadlineExceeded), LastResult: v1alpha1.ResultFailed, LastPodName: pod.Name,
		NextEligibleAt: at(gone + 10*time.Minute), WaitReason: v1alpha1.WaitCoolingOff})
	next.Items[0], next.Items[1] = next.Items[1], next.Items[0]
	p := string(phase)
	return []stopCase{{
		name: "runTimeout, " + p + ": before the deadline, a wake-up at it", group: g, now: 4 * time.Minute, pods: []corev1.Pod{pod},
		want: Plan{Status: runningStatus(g, "a", 1, 0, 4*time.Minute, b), RequeueAfter: time.Minute},
	}, {
		name: "runTimeout, " + p + ": at the deadline the pod is deleted and nothing starts", group: g, now: 5 * time.Minute, pods: []corev1.Pod{pod},
		want: Plan{Status: atDeadline, Delete: []Deletion{{Pod: &pod,
			Event: stopEventOf(pod, corev1.EventTypeWarning, "it ran longer than spec.runTimeout 5m")}}},
	}, {
		name: "runTimeout, " + p + ": nothing happens while the pod is being deleted", group: stopped, now: 5*time.Minute + time.Second,
		pods: []corev1.Pod{*deleting},
		want: Plan{Status: stopped.Status},
	}, {
		name: "runTimeout, " + p + ": once the pod is gone the run failed and the next item starts", group: stopped, now: gone,
		want: Plan{
			Status: next,
			Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed,
				Message: `Item "a" failed in pod ` + pod.Name + ": DeadlineExceeded, stopped after running longer than its run timeout"}},
			Create:   newPod(t, g, "b", 2),
			Finished: []Outcome{{Item: "a", Result: v1alpha1.ResultFailed, Duration: gone}},
		},
	}}
}

// pendingTimeoutCases are the passes of a run whose pod waits for its container past
// spec.pendingTimeout 2m (spec.runTimeout 10m).
func pendingTimeoutCases(t *testing.T) []stopCase {
	t.Helper()
	g := runningGroup(t, func(s *v1alpha1.OaatGroupSpec) { s.PendingTimeout, s.RunTimeout = "2m", "10m" }, "a", "b")
	pod := withStatuses(runPod(t, g, "a", 1, corev1.PodPending), nil, []corev1.ContainerStatus{waiting("main", "ContainerCreating")})
	started := withStatuses(pod, nil, []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}})
	b := v1alpha1.ItemStatus{Name: "b"}
	stopped := stopping(g, v1alpha1.StopPendingTimeout, 2*time.Minute, b)
	gone := 2*time.Minute + 2*time.Second
	next := runningStatus(g, "b", 2, gone, 2*time.Minute, v1alpha1.ItemStatus{Name: "a", LastStarted: at(0), LastFailure: at(gone),
		FailureCount: 1, LastReason: string(v1alpha1.ReasonPendingTimeout), LastResult: v1alpha1.ResultFailed, LastPodName: pod.Name,
		NextEligibleAt: at(gone + 10*time.Minute), WaitReason: v1alpha1.WaitCoolingOff})
	next.Items[0], next.Items[1] = next.Items[1], next.Items[0]
	return []stopCase{{
		name: "pendingTimeout: before the deadline, a wake-up at it", group: g, now: time.Minute, pods: []corev1.Pod{pod},
		want: Plan{Status: runningStatus(g, "a", 1, 0, time.Minute, b), RequeueAfter: time.Minute},
	}, {
		name: "pendingTimeout: a pod whose container started is left to runTimeout, whatever its phase", group: g, now: 3 * time.Minute,
		pods: []corev1.Pod{started},
		want: Plan{Status: runningStatus(g, "a", 1, 0, 3*time.Minute, b), RequeueAfter: 7 * time.Minute},
	}, {
		name: "pendingTimeout: at the deadline the pod is deleted with an event that says what it waits for", group: g, now: 2 * time.Minute,
		pods: []corev1.Pod{pod},
		want: Plan{Status: stopped.Status, Delete: []Deletion{{Pod: &pod, Event: stopEventOf(pod, corev1.EventTypeWarning,
			"no container started within spec.pendingTimeout 2m (waiting: main: ContainerCreating)")}}},
	}, {
		name: "pendingTimeout: a pass whose cache still shows the pod deletes it again, without a second event", group: stopped,
		now: 2*time.Minute + time.Second, pods: []corev1.Pod{pod},
		want: Plan{Status: stopped.Status, Delete: []Deletion{{Pod: &pod}}},
	}, {
		name: "pendingTimeout: once the pod is gone the run failed, saying why, and the next item starts", group: stopped, now: gone,
		want: Plan{
			Status: next,
			Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed, Message: `Item "a" failed in pod ` + pod.Name +
				": PendingTimeout, stopped because no container of its pod started within spec.pendingTimeout"}},
			Create:   newPod(t, g, "b", 2),
			Finished: []Outcome{{Item: "a", Result: v1alpha1.ResultFailed, Duration: gone}},
		},
	}}
}

// windowCases are the passes of a run that a blackout window 12:30-13:00 meets.
func windowCases(t *testing.T) []stopCase {
	t.Helper()
	g := runningGroup(t, func(s *v1alpha1.OaatGroupSpec) {
		s.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:30", End: "13:00", StopRunning: true}}
	}, "a", "b")
	pod := runPod(t, g, "a", 1, corev1.PodRunning)
	b := v1alpha1.ItemStatus{Name: "b", NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitBlackout}
	stopped := stopping(g, v1alpha1.StopInterrupted, 30*time.Minute, b)
	ended := 30*time.Minute + time.Second
	lets := runningGroup(t, func(s *v1alpha1.OaatGroupSpec) {
		s.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:30", End: "13:00"}}
	}, "a")
	return []stopCase{{
		name: "stopRunning window: before it opens, a wake-up then", group: g, now: 10 * time.Minute, pods: []corev1.Pod{pod},
		want: Plan{Status: runningStatus(g, "a", 1, 0, 10*time.Minute, v1alpha1.ItemStatus{Name: "b"}), RequeueAfter: 20 * time.Minute},
	}, {
		name: "stopRunning window: when it opens the run stops and the other items wait for its end", group: g, now: 30 * time.Minute,
		pods: []corev1.Pod{pod},
		want: Plan{Status: stopped.Status, Delete: []Deletion{{Pod: &pod,
			Event: stopEventOf(pod, corev1.EventTypeNormal, "a blackout window with stopRunning opened")}}},
	}, {
		name: "stopRunning window: the run was interrupted, nothing starts inside the window", group: stopped, now: ended,
		want: Plan{
			Status: v1alpha1.OaatGroupStatus{
				ObservedGeneration: 1,
				Conditions:         []metav1.Condition{readyCond(2, 30*time.Minute), idleCond(ended)},
				RunCount:           1, ItemCount: 2, Items: []v1alpha1.ItemStatus{
					{Name: "a", LastStarted: at(0), LastReason: string(v1alpha1.ReasonInterrupted), LastResult: v1alpha1.ResultInterrupted, LastPodName: pod.Name,
						NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitBlackout}, b},
			},
			Events: []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunInterrupted,
				Message: `Item "a" was interrupted in pod ` + pod.Name + ": Interrupted, stopped because a blackout window with stopRunning opened"}},
			Finished:     []Outcome{{Item: "a", Result: v1alpha1.ResultInterrupted, Duration: ended}},
			RequeueAfter: 30*time.Minute - time.Second,
		},
	}, {
		name: "a window without stopRunning lets the run finish", group: lets, now: 40 * time.Minute,
		pods: []corev1.Pod{runPod(t, lets, "a", 1, corev1.PodRunning)},
		want: Plan{Status: runningStatus(lets, "a", 1, 0, 40*time.Minute)},
	}}
}

// TestStopCurrentRun: spec.runTimeout, spec.pendingTimeout and blackout windows with stopRunning
// stop the current run, announced once; its end is recorded with the reason.
func TestStopCurrentRun(t *testing.T) {
	// A run that ends by itself while it is being stopped keeps its real outcome when it succeeded.
	succeeded := runningGroup(t, func(s *v1alpha1.OaatGroupSpec) { s.RunTimeout = "5m" }, "a")
	succeeded.Status.CurrentRun.StopReason = v1alpha1.StopDeadlineExceeded
	pod := finished(runPod(t, succeeded, "a", 1, corev1.PodSucceeded), 0, "Completed", at(5*time.Minute))
	a := succeededItem("a", pod.Name, 0, 5*time.Minute)
	a.NextEligibleAt, a.WaitReason = at(time.Hour+5*time.Minute), v1alpha1.WaitSucceededRecently

	tests := append(append(append(runTimeoutCases(t, corev1.PodPending), runTimeoutCases(t, corev1.PodRunning)...),
		pendingTimeoutCases(t)...), windowCases(t)...)
	tests = append(tests, stopCase{
		name: "a stopped run that succeeded keeps its outcome", group: succeeded, now: 5 * time.Minute, pods: []corev1.Pod{pod},
		want: Plan{
			Status: v1alpha1.OaatGroupStatus{
				ObservedGeneration: 1,
				Conditions:         []metav1.Condition{readyCond(1, 5*time.Minute), idleCond(5 * time.Minute)},
				RunCount:           1, ItemCount: 1, Items: []v1alpha1.ItemStatus{a},
			},
			Events:       []Event{succeededEvent("a", pod.Name)},
			Finished:     []Outcome{{Item: "a", Result: v1alpha1.ResultSucceeded, Duration: 5 * time.Minute}},
			RequeueAfter: time.Hour,
			Untrack:      []*corev1.Pod{&pod},
		},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPlan(t, tt.want, Decide(input(tt.group, tt.now, tt.pods...)))
		})
	}
}
