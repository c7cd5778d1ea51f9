package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// t0 is 12:00 UTC.
func TestDecideRunTimeout(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodPending, corev1.PodRunning} {
		t.Run(string(phase), func(t *testing.T) {
			g := newGroup("a", "b")
			g.Spec.RunTimeout = "5m"
			running(t, g, "a", 1, at(0))
			pod := runPod(t, g, "a", 1, phase)

			p := Decide(input(g, 4*time.Minute, pod))
			if len(p.Delete) != 0 || p.Status.CurrentRun.StopReason != "" || p.RequeueAfter != time.Minute {
				t.Fatalf("before the deadline: deletes %v, stopReason %q, requeueAfter %v", deleted(p), p.Status.CurrentRun.StopReason, p.RequeueAfter)
			}

			p = Decide(input(g, 5*time.Minute, pod))
			if p.Status.CurrentRun == nil || p.Status.CurrentRun.StopReason != v1alpha1.ReasonDeadlineExceeded {
				t.Fatalf("at the deadline currentRun = %+v", p.Status.CurrentRun)
			}
			if !slices.Equal(deleted(p), []string{pod.Name + " rogue=true"}) || p.Delete[0].Event.Type != corev1.EventTypeWarning ||
				p.Delete[0].Event.Reason != v1alpha1.ReasonRunStopping {
				t.Fatalf("at the deadline deletes %v", deleted(p))
			}
			if p.Create != nil {
				t.Fatal("started an item while the stopped one still runs")
			}

			// The pod is being deleted: nothing more happens until it is gone.
			stopping := applied(g, p)
			deleting := pod.DeepCopy()
			deleting.DeletionTimestamp = at(5 * time.Minute)
			if again := Decide(input(stopping, 5*time.Minute+time.Second, *deleting)); len(again.Delete) != 0 || again.Create != nil || len(again.Finished) != 0 {
				t.Fatalf("while the pod terminates: deletes %v, create %v, finished %v", deleted(again), again.Create != nil, again.Finished)
			}

			gone := Decide(input(stopping, 5*time.Minute+2*time.Second))
			a := planItem(t, gone, "a")
			if a.LastReason != v1alpha1.ReasonDeadlineExceeded || a.FailureCount != 1 || a.LastFailure == nil || a.LastSuccess != nil {
				t.Fatalf("after the stop item a = %+v", a)
			}
			if len(gone.Finished) != 1 || gone.Finished[0].Result != ResultFailed {
				t.Fatalf("finished = %+v", gone.Finished)
			}
			if gone.Create == nil || gone.Status.CurrentRun.Item != "b" {
				t.Fatalf("the next item does not start once the stopped pod is gone: %+v", gone.Status.CurrentRun)
			}
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

	p := Decide(input(g, 5*time.Minute, pod))
	if a := planItem(t, p, "a"); a.LastSuccess == nil || a.LastReason != "Completed" {
		t.Fatalf("item a = %+v", a)
	}
}

func TestDecideStopRunningWindow(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:30", End: "13:00", StopRunning: true}}
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodRunning)

	p := Decide(input(g, 10*time.Minute, pod))
	if len(p.Delete) != 0 || p.RequeueAfter != 20*time.Minute {
		t.Fatalf("before the window: deletes %v, requeueAfter %v", deleted(p), p.RequeueAfter)
	}

	p = Decide(input(g, 30*time.Minute, pod))
	if p.Status.CurrentRun.StopReason != v1alpha1.ReasonInterrupted || len(p.Delete) != 1 || p.Delete[0].Event.Type != corev1.EventTypeNormal {
		t.Fatalf("when the window opens: currentRun %+v, deletes %v", p.Status.CurrentRun, deleted(p))
	}

	gone := Decide(input(applied(g, p), 30*time.Minute+time.Second))
	a := planItem(t, gone, "a")
	if a.LastReason != v1alpha1.ReasonInterrupted || a.LastFailure != nil || a.FailureCount != 0 || a.LastSuccess != nil || a.LastPodName != pod.Name {
		t.Fatalf("an interrupted run is neither a success nor a failure: item a = %+v", a)
	}
	if len(gone.Finished) != 1 || gone.Finished[0].Result != ResultInterrupted {
		t.Fatalf("finished = %+v", gone.Finished)
	}
	if !slices.Equal(reasons(gone), []string{v1alpha1.ReasonRunInterrupted}) {
		t.Fatalf("events = %v", reasons(gone))
	}
	if gone.Create != nil || gone.RequeueAfter != 30*time.Minute-time.Second {
		t.Fatalf("inside the window: create %v, requeueAfter %v (want the window's end)", gone.Create != nil, gone.RequeueAfter)
	}
	if a.WaitReason != v1alpha1.WaitBlackout || !a.NextEligibleAt.Equal(at(time.Hour)) {
		t.Fatalf("item a waits %q until %v, want Blackout until 13:00", a.WaitReason, a.NextEligibleAt)
	}
}

func TestDecideWindowWithoutStopRunningLetsTheRunFinish(t *testing.T) {
	g := newGroup("a")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:30", End: "13:00"}}
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodRunning)

	p := Decide(input(g, 40*time.Minute, pod))
	if len(p.Delete) != 0 || p.Status.CurrentRun.StopReason != "" || p.RequeueAfter != 0 {
		t.Fatalf("deletes %v, stopReason %q, requeueAfter %v", deleted(p), p.Status.CurrentRun.StopReason, p.RequeueAfter)
	}
}

func TestDecideInvalidWindowIsNotReady(t *testing.T) {
	g := newGroup("a")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "01:00", End: "02:00", TimeZone: "Mars/Olympus"}}
	_, parseErr := schedule.ParseWindow("01:00", "02:00", nil, "Mars/Olympus")

	p := Decide(input(g, 0))
	c := condition(t, p, v1alpha1.ConditionReady)
	if c.Reason != v1alpha1.ReasonInvalidSpec || c.Message != "spec.blackoutWindows[0]: "+parseErr.Error() {
		t.Fatalf("Ready = %+v", c)
	}
	if p.Create != nil {
		t.Fatal("started an item of a group with an invalid spec")
	}
}
