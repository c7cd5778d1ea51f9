package planner

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// A node whose clock runs 10 minutes ahead reports a finishedAt in the operator's future: the
// outcome is recorded at the decision time, so that the item waits its frequency and no more.
func TestDecideClampsAFinishedAtFromTheFuture(t *testing.T) {
	g := newGroup("a", "b")
	running(t, g, "a", 1, at(0))
	pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(12*time.Minute))
	pod.Status.StartTime = at(10 * time.Minute) // the node's clock, 10 minutes ahead

	// lastSuccess is the decision time, the item due a frequency after it; the run took 2m
	// (from the pod's start, clamped to the run's).
	now := 2 * time.Minute
	a := succeededItem("a", pod.Name, 0, now)
	a.NextEligibleAt, a.WaitReason = at(time.Hour+now), v1alpha1.WaitSucceededRecently
	want := runningStatus(g, "b", 2, now, now, a)
	want.Items[0], want.Items[1] = want.Items[1], want.Items[0]
	checkPlan(t, Plan{
		Status:   want,
		Events:   []Event{succeededEvent("a", pod.Name)},
		Create:   newPod(t, g, "b", 2),
		Finished: []Outcome{{Item: "a", Result: v1alpha1.ResultSucceeded, Duration: now}},
		Untrack:  []*corev1.Pod{&pod},
	}, Decide(input(g, now, pod)))
}

// A node whose clock runs behind reports a finishedAt before the run even started (as the
// operator recorded it): the outcome is placed at the run's start, so that in mode EachOnce a
// success is never counted in the round before the reset that started it.
func TestDecideClampsAFinishedAtBeforeTheRunStarted(t *testing.T) {
	g := newGroup("a")
	g.Spec.Mode = v1alpha1.ModeEachOnce
	g.Status.RoundStartedAt = at(time.Hour)
	itemStatus(g, "a").LastSuccess = at(-time.Hour) // the previous round
	running(t, g, "a", 2, at(time.Hour+30*time.Second))
	pod := finished(runPod(t, g, "a", 2, corev1.PodSucceeded), 0, "Completed", at(50*time.Minute))

	// lastSuccess is the run's start: the round's success counts, and item a does not run again.
	checkEachOnceDone(t, g, time.Hour+30*time.Second, pod, Decide(input(g, time.Hour+time.Minute, pod)))
}

// An edit that makes the spec invalid during a run (a mistyped time zone of a second window)
// must not switch off the run's timeout nor the stopRunning windows that still parse.
func TestDecideInvalidEditKeepsTheRunsStops(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.RunTimeout = "5m"
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{
		{Start: "12:30", End: "13:00", StopRunning: true},
		{Start: "01:00", End: "02:00", TimeZone: "Europe/Berln"},
	}
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodRunning)

	// Not Ready, the run goes on; the spec is read again in 5s (before the run's deadline). With
	// the spec unread, no item's wait is written: the running item's stays as it was.
	text := `spec.blackoutWindows[1]: time zone "Europe/Berln": unknown time zone Europe/Berln`
	invalid := func(now time.Duration, stop v1alpha1.StopReason) Plan {
		status := runningStatus(g, "a", 1, 0, 4*time.Minute, v1alpha1.ItemStatus{Name: "b"})
		status.Conditions[0] = cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, text, now)
		status.CurrentRun.StopReason, status.Items[0].WaitReason = stop, ""
		return Plan{Status: status}
	}
	want := invalid(4*time.Minute, "")
	want.Events = []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonInvalidSpec, Message: text}}
	want.RequeueAfter = 5 * time.Second
	checkPlan(t, want, Decide(input(g, 4*time.Minute, pod)))

	// At the deadline the run stops.
	want = invalid(5*time.Minute, v1alpha1.StopDeadlineExceeded)
	want.Status.Conditions[1] = runningCond(g, "a", 1, 5*time.Minute)
	want.Events = []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonInvalidSpec, Message: text}}
	want.Delete = []Deletion{{Pod: &pod, Event: &Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunStopping,
		Message: `Stopping item "a" in pod ` + pod.Name + ": it ran longer than spec.runTimeout 5m"}}}
	want.RequeueAfter = 5 * time.Second
	checkPlan(t, want, Decide(input(g, 5*time.Minute, pod)))

	// Without a runTimeout, the valid stopRunning window stops it when it opens; nothing starts.
	g.Spec.RunTimeout = ""
	want = invalid(30*time.Minute, v1alpha1.StopInterrupted)
	want.Status.Conditions[1] = runningCond(g, "a", 1, 30*time.Minute)
	want.Events = []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonInvalidSpec, Message: text}}
	want.Delete = []Deletion{{Pod: &pod, Event: &Event{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunStopping,
		Message: `Stopping item "a" in pod ` + pod.Name + ": a blackout window with stopRunning opened"}}}
	want.RequeueAfter = 5 * time.Second
	checkPlan(t, want, Decide(input(g, 30*time.Minute, pod)))
}

// The pass that starts a round (a reset) starts its first item with the round's own stamp: a
// success clamped to the run's start (a node clock behind, or a run under a second) equals
// roundStartedAt and counts in the round, as with a schedule (issue 25, defect 8).
func TestDecideEachOnceCountsASuccessAtTheRoundsStart(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.Mode = v1alpha1.ModeEachOnce
	g.Status.RoundStartedAt = at(time.Hour)
	itemStatus(g, "b").LastSuccess = at(time.Hour + time.Second) // done in this round
	running(t, g, "a", 2, at(time.Hour))                         // started by the reset's pass
	pod := finished(runPod(t, g, "a", 2, corev1.PodSucceeded), 0, "Completed", at(time.Hour-time.Second))

	// lastSuccess is the run's start, which is the round's: the success counts, and item a does
	// not run a second time in the round.
	checkEachOnceDone(t, g, time.Hour, pod, Decide(input(g, time.Hour+time.Minute, pod)))
}

// A reset in the second an item's run of the previous round succeeded starts a round in which
// that success does not count: the run had started before the round (e2e: a reset right after
// the round completed left its last item done, and it did not run again).
func TestDecideResetInTheSecondOfASuccess(t *testing.T) {
	for _, calendar := range []bool{false, true} {
		g := newGroup("a")
		g.Spec.Mode = v1alpha1.ModeEachOnce
		round := at(time.Hour)
		g.Status.RoundStartedAt = round
		a := itemStatus(g, "a")
		a.LastStarted, a.LastSuccess = at(time.Hour-time.Second), round
		d := newDecision(input(g, time.Hour))
		if calendar {
			if got := d.doneInRound(a); got {
				t.Errorf("with a schedule: the previous round's success counts in the round")
			}
			continue
		}
		if got := d.done(a); got {
			t.Errorf("EachOnce: the previous round's success counts in the round")
		}
		a.LastStarted = round // started by the round's own pass: it counts
		if got := d.done(a); !got {
			t.Errorf("EachOnce: the round's own run, clamped to its start, does not count")
		}
	}
}

// checkEachOnceDone checks the plan of the EachOnce group g (of items a and, optionally, b done
// already) that records the success of item a's run in pod at lastSuccess, its finishedAt clamped
// to the run's start: the round is complete, nothing starts. The run's time is counted from its
// start to the decision, the node's end being before it.
func checkEachOnceDone(t *testing.T, g *v1alpha1.OaatGroup, lastSuccess time.Duration, pod corev1.Pod, p Plan) {
	t.Helper()
	now := time.Hour + time.Minute
	start := g.Status.CurrentRun.StartedAt.Sub(t0)
	a := succeededItem("a", pod.Name, start, lastSuccess)
	a.RecentRunSeconds, a.WaitReason = []int64{int64((now - start) / time.Second)}, v1alpha1.WaitDone
	items := []v1alpha1.ItemStatus{a}
	if len(g.Spec.OaatItems) > 1 {
		items = append(items, v1alpha1.ItemStatus{Name: "b", LastSuccess: at(time.Hour + time.Second), WaitReason: v1alpha1.WaitDone})
	}
	text := fmt.Sprintf("All %d items have succeeded in this round; set annotation %s to a new value to run them again", len(items), v1alpha1.AnnotationReset)
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{readyCond(len(items), now),
				cond(v1alpha1.ConditionComplete, metav1.ConditionTrue, v1alpha1.ReasonAllSucceeded, text, now), idleCond(now)},
			RunCount: g.Status.RunCount, ItemCount: int32(len(items)), Items: items, RoundStartedAt: g.Status.RoundStartedAt,
		},
		Events:   []Event{succeededEvent("a", pod.Name), {Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonAllSucceeded, Message: text}},
		Finished: []Outcome{{Item: "a", Result: v1alpha1.ResultSucceeded, Duration: now - start}},
		Untrack:  []*corev1.Pod{&pod},
	}, p)
}
