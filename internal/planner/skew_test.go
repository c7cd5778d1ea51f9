package planner

import (
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

	p := Decide(input(g, 2*time.Minute, pod))
	a := planItem(t, p, "a")
	if a.LastSuccess == nil || !a.LastSuccess.Equal(at(2*time.Minute)) {
		t.Fatalf("lastSuccess = %v, want the decision time %v", a.LastSuccess, at(2*time.Minute))
	}
	if !a.NextEligibleAt.Equal(at(time.Hour + 2*time.Minute)) {
		t.Fatalf("nextEligibleAt = %v, want frequency after the decision time", a.NextEligibleAt)
	}
	if len(p.Finished) != 1 || p.Finished[0].Duration != 2*time.Minute {
		t.Fatalf("finished = %+v, want a run of 2m (started at the pod's clamped start)", p.Finished)
	}
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

	p := Decide(input(g, time.Hour+time.Minute, pod))
	a := planItem(t, p, "a")
	if a.LastSuccess == nil || !a.LastSuccess.Equal(at(time.Hour+30*time.Second)) {
		t.Fatalf("lastSuccess = %v, want the run's start %v", a.LastSuccess, at(time.Hour+30*time.Second))
	}
	if c := condition(t, p, v1alpha1.ConditionComplete); c.Status != metav1.ConditionTrue {
		t.Fatalf("the round's success is not counted: Complete = %+v, item a = %+v", c, a)
	}
	if p.Create != nil {
		t.Fatal("item a runs again in the round it succeeded in")
	}
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

	p := Decide(input(g, 4*time.Minute, pod))
	if c := condition(t, p, v1alpha1.ConditionReady); c.Reason != v1alpha1.ReasonInvalidSpec {
		t.Fatalf("Ready = %+v, want InvalidSpec", c)
	}
	if p.RequeueAfter == 0 || p.RequeueAfter > time.Minute {
		t.Fatalf("requeueAfter = %v, want a wake-up by the run's deadline in 1m", p.RequeueAfter)
	}
	p = Decide(input(g, 5*time.Minute, pod))
	if p.Status.CurrentRun == nil || p.Status.CurrentRun.StopReason != v1alpha1.ReasonDeadlineExceeded || len(p.Delete) != 1 {
		t.Fatalf("at the deadline: currentRun %+v, deletes %v", p.Status.CurrentRun, deleted(p))
	}

	g.Spec.RunTimeout = ""
	p = Decide(input(g, 30*time.Minute, pod))
	if p.Status.CurrentRun == nil || p.Status.CurrentRun.StopReason != v1alpha1.ReasonInterrupted || len(p.Delete) != 1 {
		t.Fatalf("when the valid stopRunning window opens: currentRun %+v, deletes %v", p.Status.CurrentRun, deleted(p))
	}
	if p.Create != nil {
		t.Fatal("started an item of a group with an invalid spec")
	}
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

	p := Decide(input(g, time.Hour+time.Minute, pod))
	a := planItem(t, p, "a")
	if a.LastSuccess == nil || !a.LastSuccess.Equal(at(time.Hour)) {
		t.Fatalf("lastSuccess = %v, want the run's start %v", a.LastSuccess, at(time.Hour))
	}
	if c := condition(t, p, v1alpha1.ConditionComplete); c.Status != metav1.ConditionTrue {
		t.Errorf("the success at the round's start is not counted: Complete = %+v, item a = %+v", c, a)
	}
	if p.Create != nil {
		t.Errorf("item a runs a second time in the round: %s", p.Create.Name)
	}
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
