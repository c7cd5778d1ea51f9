package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// runningStatus is the status of group g, of n items, whose run `run` of item started at start
// and goes on at now (a Ready and Running since now), with the other items' entries.
func runningStatus(g *v1alpha1.OaatGroup, item string, run int64, start, now time.Duration, others ...v1alpha1.ItemStatus) v1alpha1.OaatGroupStatus {
	items := append([]v1alpha1.ItemStatus{{Name: item, LastStarted: at(start), WaitReason: v1alpha1.WaitRunning}}, others...)
	return v1alpha1.OaatGroupStatus{
		ObservedGeneration: 1,
		Conditions:         []metav1.Condition{readyCond(len(items), now), runningCond(g, item, run, now)},
		CurrentRun:         currentRun(g, item, run, start),
		RunCount:           run, ItemCount: int32(len(items)), Items: items,
	}
}

// t0 is 12:00 UTC.
func TestDecideRunTimeout(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning} {
		t.Run(string(phase), func(t *testing.T) {
			g := newGroup("a", "b")
			g.Spec.RunTimeout = "5m"
			running(t, g, "a", 1, at(0))
			pod := runPod(t, g, "a", 1, phase)

			// Before the deadline: a wake-up at it.
			checkPlan(t, Plan{Status: runningStatus(g, "a", 1, 0, 4*time.Minute, v1alpha1.ItemStatus{Name: "b"}), RequeueAfter: time.Minute},
				Decide(input(g, 4*time.Minute, pod)))

			// At the deadline the run stops: its pod is deleted, and nothing starts meanwhile.
			p := Decide(input(g, 5*time.Minute, pod))
			want := runningStatus(g, "a", 1, 0, 5*time.Minute, v1alpha1.ItemStatus{Name: "b"})
			want.CurrentRun.StopReason = v1alpha1.ReasonDeadlineExceeded
			checkPlan(t, Plan{Status: want, Delete: []Deletion{{Pod: &pod, Event: &Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunStopping,
				Message: `Stopping item "a" in pod ` + pod.Name + ": it ran longer than spec.runTimeout 5m"}}}}, p)

			// The pod is being deleted: nothing more happens until it is gone.
			stopping := applied(g, p)
			deleting := pod.DeepCopy()
			deleting.DeletionTimestamp = at(5 * time.Minute)
			checkPlan(t, Plan{Status: stopping.Status}, Decide(input(stopping, 5*time.Minute+time.Second, *deleting)))

			// Once it is gone the run is a failure, and the next item starts.
			now := 5*time.Minute + 2*time.Second
			want = runningStatus(g, "b", 2, now, 5*time.Minute, v1alpha1.ItemStatus{Name: "a", LastStarted: at(0), LastFailure: at(now), FailureCount: 1,
				LastReason: v1alpha1.ReasonDeadlineExceeded, LastPodName: pod.Name,
				NextEligibleAt: at(now + 10*time.Minute), WaitReason: v1alpha1.WaitCoolingOff})
			want.Items[0], want.Items[1] = want.Items[1], want.Items[0]
			checkPlan(t, Plan{
				Status: want,
				Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed,
					Message: `Item "a" failed in pod ` + pod.Name + ": DeadlineExceeded, stopped after running longer than spec.runTimeout"}},
				Create:   newPod(t, g, "b", 2),
				Finished: []Outcome{{Item: "a", Result: ResultFailed, Duration: now}},
			}, Decide(input(stopping, now)))
		})
	}
}

// A run that ends by itself while it is being stopped keeps its real outcome when it succeeded.
func TestDecideStoppedRunThatSucceeded(t *testing.T) {
	g := newGroup("a")
	g.Spec.RunTimeout = "5m"
	running(t, g, "a", 1, at(0))
	g.Status.CurrentRun.StopReason = v1alpha1.ReasonDeadlineExceeded
	pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(5*time.Minute))

	a := succeededItem("a", pod.Name, 0, 5*time.Minute)
	a.NextEligibleAt, a.WaitReason = at(time.Hour+5*time.Minute), v1alpha1.WaitSucceededRecently
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, 5*time.Minute), idleCond(5 * time.Minute)},
			RunCount:           1, ItemCount: 1, Items: []v1alpha1.ItemStatus{a},
		},
		Events:       []Event{succeededEvent("a", pod.Name)},
		Finished:     []Outcome{{Item: "a", Result: ResultSucceeded, Duration: 5 * time.Minute}},
		RequeueAfter: time.Hour,
		Untrack:      []*corev1.Pod{&pod},
	}, Decide(input(g, 5*time.Minute, pod)))
}

func TestDecideStopRunningWindow(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:30", End: "13:00", StopRunning: true}}
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodRunning)

	// Before the window: a wake-up when it opens.
	checkPlan(t, Plan{Status: runningStatus(g, "a", 1, 0, 10*time.Minute, v1alpha1.ItemStatus{Name: "b"}), RequeueAfter: 20 * time.Minute},
		Decide(input(g, 10*time.Minute, pod)))

	// When it opens the run stops, and the other items wait for its end at 13:00.
	p := Decide(input(g, 30*time.Minute, pod))
	want := runningStatus(g, "a", 1, 0, 30*time.Minute, v1alpha1.ItemStatus{Name: "b", NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitBlackout})
	want.CurrentRun.StopReason = v1alpha1.ReasonInterrupted
	checkPlan(t, Plan{Status: want, Delete: []Deletion{{Pod: &pod, Event: &Event{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunStopping,
		Message: `Stopping item "a" in pod ` + pod.Name + ": a blackout window with stopRunning opened"}}}}, p)

	// An interrupted run is neither a success nor a failure; inside the window nothing starts, and
	// the items wait for its end at 13:00.
	now := 30*time.Minute + time.Second
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, 30*time.Minute), idleCond(now)},
			RunCount:           1, ItemCount: 2, Items: []v1alpha1.ItemStatus{
				{Name: "a", LastStarted: at(0), LastReason: v1alpha1.ReasonInterrupted, LastPodName: pod.Name,
					NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitBlackout},
				{Name: "b", NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitBlackout},
			},
		},
		Events: []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunInterrupted,
			Message: `Item "a" was interrupted in pod ` + pod.Name + ": Interrupted, stopped because a blackout window with stopRunning opened"}},
		Finished:     []Outcome{{Item: "a", Result: ResultInterrupted, Duration: now}},
		RequeueAfter: 30*time.Minute - time.Second,
	}, Decide(input(applied(g, p), now)))
}

func TestDecideWindowWithoutStopRunningLetsTheRunFinish(t *testing.T) {
	g := newGroup("a")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:30", End: "13:00"}}
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodRunning)

	checkPlan(t, Plan{Status: runningStatus(g, "a", 1, 0, 40*time.Minute)}, Decide(input(g, 40*time.Minute, pod)))
}

func TestDecideInvalidWindowIsNotReady(t *testing.T) {
	g := newGroup("a")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "01:00", End: "02:00", TimeZone: "Mars/Olympus"}}
	_, parseErr := schedule.ParseWindow("01:00", "02:00", nil, "Mars/Olympus")

	// Nothing starts; the spec is read again in 5s.
	text := "spec.blackoutWindows[0]: " + parseErr.Error()
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{
				cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, text, 0), idleCond(0)},
			ItemCount: 1, Items: []v1alpha1.ItemStatus{{Name: "a"}},
		},
		Events:       []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonInvalidSpec, Message: text}},
		RequeueAfter: 5 * time.Second,
	}, Decide(input(g, 0)))
}
