package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// newOnDemandRun is an OaatRun of the group for item, whose creation time is t0 plus created.
func newOnDemandRun(name, group, item string, created time.Duration) v1alpha1.OaatRun {
	return v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: *at(created)},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: group, Item: item, TTLAfterFinished: "1h"},
	}
}

func withOnDemandRuns(in Input, onDemandRuns ...v1alpha1.OaatRun) Input {
	in.OnDemandRuns = onDemandRuns
	return in
}

// updates describes on-demand run updates as "name phase reason".
func updates(us []OnDemandRunUpdate) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.OnDemandRun.Name+" "+string(u.Status.Phase)+" "+u.Status.Reason)
	}
	return out
}

// onDemandUpdate is the update of the OaatRun run to status.
func onDemandUpdate(run v1alpha1.OaatRun, endsRun bool, status v1alpha1.OaatRunStatus) OnDemandRunUpdate {
	return OnDemandRunUpdate{OnDemandRun: &run, Status: status, EndsRun: endsRun}
}

func TestDecideServesOnDemandRunsFirstInOrder(t *testing.T) {
	g := newGroup("a", "b", "c")
	// a never ran, so the schedule would pick it; the on-demand runs go first, oldest first.
	later := newOnDemandRun("later", "backups", "b", 2*time.Second)
	first := newOnDemandRun("first", "backups", "c", time.Second)

	pod := newPod(t, g, "c", 1)
	pod.Annotations[v1alpha1.AnnotationOaatRun] = "first"
	cr := currentRun(g, "c", 1, time.Minute)
	cr.OaatRun = "first"
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(3, time.Minute), runningCond(g, "c", 1, time.Minute)},
			CurrentRun:         cr, RunCount: 1, ItemCount: 3,
			Items: []v1alpha1.ItemStatus{{Name: "a"}, {Name: "b"}, {Name: "c", LastStarted: at(time.Minute), WaitReason: v1alpha1.WaitRunning}},
		},
		Create: pod,
		OpenOnDemandRuns: []OnDemandRunUpdate{
			onDemandUpdate(later, false, v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending, Reason: string(v1alpha1.ReasonQueued),
				Message: "waits for the group's running item or older on-demand runs"}),
			onDemandUpdate(first, false, v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunInProgress, Reason: string(v1alpha1.ReasonItemRunning),
				Message: `Item "c" runs in pod ` + pod.Name, PodName: pod.Name, StartedAt: at(time.Minute)}),
		},
	}, Decide(withOnDemandRuns(input(g, time.Minute), later, first)))
}

func TestDecideRejectsOnDemandRuns(t *testing.T) {
	g := newGroup("a")
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodRunning)
	unknown := newOnDemandRun("unknown", "backups", "zzz", 0)
	pending := newOnDemandRun("pending", "backups", "a", time.Second)
	pending.Status.Phase = v1alpha1.OaatRunPending
	duplicate := newOnDemandRun("duplicate", "backups", "a", 2*time.Second)
	done := newOnDemandRun("done", "backups", "a", -time.Hour)
	done.Status.Phase = v1alpha1.OaatRunSucceeded

	// The pending run stays queued behind the run that goes on; nothing starts.
	rejected := func(reason v1alpha1.Reason, text string) v1alpha1.OaatRunStatus {
		return v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunRejected, Reason: string(reason), Message: text, FinishedAt: at(time.Minute)}
	}
	checkPlan(t, Plan{
		FinalOnDemandRuns: []OnDemandRunUpdate{
			onDemandUpdate(unknown, false, rejected(v1alpha1.ReasonUnknownItem, `"zzz" is not an item of OaatGroup backups`)),
			onDemandUpdate(duplicate, false, rejected(v1alpha1.ReasonDuplicate, `OaatRun pending already asks to run item "a" and is still pending`)),
		},
		Status: runningStatus(g, "a", 1, 0, time.Minute),
		OpenOnDemandRuns: []OnDemandRunUpdate{onDemandUpdate(pending, false, v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending,
			Reason: string(v1alpha1.ReasonQueued), Message: "waits for the group's running item or older on-demand runs"})},
	}, Decide(withOnDemandRuns(input(g, time.Minute, pod), unknown, pending, duplicate, done)))
}

func TestDecideSettlesTheOnDemandRunOfAFinishedRun(t *testing.T) {
	g := newGroup("a", "b")
	running(t, g, "a", 1, at(0))
	g.Status.CurrentRun.OaatRun = "now"
	onDemandRun := newOnDemandRun("now", "backups", "a", 0)
	onDemandRun.Status = v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunInProgress, PodName: g.Status.CurrentRun.PodName, StartedAt: at(0)}
	pod := finished(runPod(t, g, "a", 1, corev1.PodFailed), 2, "Error", at(30*time.Second))

	// The on-demand run of the run that the plan ends is final (since the decision), and marked
	// EndsRun.
	failed := v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunFailed, Reason: "Error", Message: `Item "a" failed in pod ` + pod.Name + ": Error, exit code 2",
		PodName: pod.Name, StartedAt: at(0), FinishedAt: at(time.Minute), ExitCode: ptr.To[int32](2)}
	p := Decide(withOnDemandRuns(input(g, time.Minute, pod), onDemandRun))
	checkOnDemand(t, []OnDemandRunUpdate{onDemandUpdate(onDemandRun, true, failed)}, nil, p)
	// Decided again while the on-demand run is still open (its final status was not written, or the
	// cache has not caught up), the group, which has recorded its run, settles it from the item's
	// history with the same outcome; the group's status does not wait for it.
	again := Decide(withOnDemandRuns(input(applied(g, p), time.Minute, pod), onDemandRun))
	checkOnDemand(t, []OnDemandRunUpdate{onDemandUpdate(onDemandRun, false, failed)}, nil, again)

	// An on-demand run in progress whose run the group neither runs nor recorded has lost it.
	lost := onDemandRun.DeepCopy()
	lost.Status.PodName = "backups-a-other-9"
	p = Decide(withOnDemandRuns(input(applied(g, p), time.Minute, pod), *lost))
	checkOnDemand(t, []OnDemandRunUpdate{onDemandUpdate(*lost, false, v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunFailed,
		Reason: string(v1alpha1.ReasonPodNotFound), Message: "the group no longer runs this on-demand run's item: its status was changed by someone else",
		PodName: "backups-a-other-9", StartedAt: at(0), FinishedAt: at(time.Minute)})}, nil, p)
}

// checkOnDemand fails the test with the differences between the on-demand run updates wanted,
// final and open, and the plan's.
func checkOnDemand(t *testing.T, final, open []OnDemandRunUpdate, p Plan) {
	t.Helper()
	if diff := cmp.Diff([][]OnDemandRunUpdate{final, open}, [][]OnDemandRunUpdate{p.FinalOnDemandRuns, p.OpenOnDemandRuns}, planOpts...); diff != "" {
		t.Errorf("on-demand run updates, final then open (-want +got):\n%s", diff)
	}
}

func TestDecideOnDemandRunsAndHolds(t *testing.T) {
	tests := []struct {
		name       string
		setUp      func(g *v1alpha1.OaatGroup, onDemandRun *v1alpha1.OaatRun)
		wantStart  bool
		wantReason string
		// wantMessage is the message of the on-demand run kept pending.
		wantMessage string
	}{
		{"a parked item runs on demand", func(g *v1alpha1.OaatGroup, _ *v1alpha1.OaatRun) {
			it := itemStatus(g, "a")
			it.LastFailure, it.FailureCount, it.ParkedGeneration = at(0), 1, g.Generation
		}, true, "", ""},
		{"an item within its frequency runs on demand", func(g *v1alpha1.OaatGroup, _ *v1alpha1.OaatRun) {
			itemStatus(g, "a").LastSuccess = at(0)
		}, true, "", ""},
		{"suspended", func(g *v1alpha1.OaatGroup, _ *v1alpha1.OaatRun) { g.Spec.Suspend = true }, false, string(v1alpha1.WaitSuspended),
			"the group is suspended"},
		{"blackout", func(g *v1alpha1.OaatGroup, _ *v1alpha1.OaatRun) {
			g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:00", End: "13:00"}}
		}, false, string(v1alpha1.WaitBlackout), "a blackout window is open until 2026-11-21T13:00:00Z"},
		{"blackout ignored", func(g *v1alpha1.OaatGroup, onDemandRun *v1alpha1.OaatRun) {
			g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:00", End: "13:00", StopRunning: true}}
			onDemandRun.Spec.IgnoreBlackoutWindows = true
		}, true, "", ""},
		{"not ready", func(g *v1alpha1.OaatGroup, _ *v1alpha1.OaatRun) { g.Spec.OaatType = "missing" }, false, string(v1alpha1.ReasonGroupNotReady),
			`the group is not Ready: OaatType "missing" not found in namespace ns`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGroup("a", "b")
			onDemandRun := newOnDemandRun("now", "backups", "a", 0)
			tt.setUp(g, &onDemandRun)
			in := withOnDemandRuns(input(g, time.Minute), onDemandRun)
			if g.Spec.OaatType == "missing" {
				in.Type = nil
			}
			p := Decide(in)
			if started := p.Create != nil && p.Status.CurrentRun.OaatRun == "now"; started != tt.wantStart {
				t.Fatalf("started the on-demand run: %v, want %v (currentRun %+v)", started, tt.wantStart, p.Status.CurrentRun)
			}
			if tt.wantStart {
				// A started on-demand run is not stopped by a window it may ignore.
				pod := *p.Create.DeepCopy()
				pod.Status.Phase = corev1.PodRunning
				next := applied(g, p)
				later := Decide(withOnDemandRuns(input(next, 2*time.Minute, pod), onDemandRun))
				if diff := cmp.Diff(next.Status, later.Status); diff != "" || len(later.Delete) != 0 {
					t.Errorf("the on-demand run is stopped: deletes %v, status (-before +after):\n%s", deleted(later), diff)
				}
				return
			}
			checkOnDemand(t, nil, []OnDemandRunUpdate{onDemandUpdate(onDemandRun, false, v1alpha1.OaatRunStatus{
				Phase: v1alpha1.OaatRunPending, Reason: tt.wantReason, Message: tt.wantMessage})}, p)
		})
	}
}

// An on-demand run left open after the group recorded its run is settled with the run's real
// outcome, whichever it was, even once the pod is gone.
func TestDecideSettlesAnOpenOnDemandRunFromHistory(t *testing.T) {
	tests := map[string]struct {
		pod        func(g *v1alpha1.OaatGroup) corev1.Pod
		stop       v1alpha1.StopReason
		wantPhase  v1alpha1.OaatRunPhase
		wantReason string
		wantCode   int32
		// wantMessage is the on-demand run's final message.
		wantMessage string
	}{
		"success exit code": {
			pod: func(g *v1alpha1.OaatGroup) corev1.Pod {
				return finished(runPod(t, g, "a", 1, corev1.PodFailed), 3, "Error", at(30*time.Second))
			},
			wantPhase: v1alpha1.OaatRunSucceeded, wantReason: "Error", wantCode: 3,
			wantMessage: `Item "a" succeeded in pod backups-a-ffd8005a72-1: Error, exit code 3`,
		},
		"failure": {
			pod: func(g *v1alpha1.OaatGroup) corev1.Pod {
				return finished(runPod(t, g, "a", 1, corev1.PodFailed), 1, "Error", at(30*time.Second))
			},
			wantPhase: v1alpha1.OaatRunFailed, wantReason: "Error", wantCode: 1,
			wantMessage: `Item "a" failed in pod backups-a-ffd8005a72-1: Error, exit code 1`,
		},
		"interrupted": {
			pod: func(g *v1alpha1.OaatGroup) corev1.Pod {
				return finished(runPod(t, g, "a", 1, corev1.PodFailed), 137, "Error", at(30*time.Second))
			},
			stop:      v1alpha1.StopInterrupted,
			wantPhase: v1alpha1.OaatRunFailed, wantReason: string(v1alpha1.ReasonInterrupted), wantCode: 137,
			wantMessage: `Item "a" interrupted in pod backups-a-ffd8005a72-1: Interrupted, exit code 137`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			g := newGroup("a", "b")
			g.Spec.ExitCodes = &v1alpha1.ExitCodes{Success: []int32{3}}
			g.Spec.Suspend = true               // nothing else starts
			itemStatus(g, "a").FailureCount = 2 // earlier failures
			running(t, g, "a", 1, at(0))
			g.Status.CurrentRun.OaatRun, g.Status.CurrentRun.StopReason = "now", tt.stop
			onDemandRun := newOnDemandRun("now", "backups", "a", 0)
			onDemandRun.Status = v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunInProgress, PodName: g.Status.CurrentRun.PodName, StartedAt: at(0)}
			pod := tt.pod(g)

			// The run is recorded while the on-demand run's final status is lost.
			recorded := applied(g, Decide(withOnDemandRuns(input(g, time.Minute, pod), onDemandRun)))
			if recorded.Status.CurrentRun != nil {
				t.Fatalf("the run was not recorded: %+v", recorded.Status.CurrentRun)
			}
			// Later, its pod gone, the on-demand run is still open: it is settled, final since then.
			checkOnDemand(t, []OnDemandRunUpdate{onDemandUpdate(onDemandRun, false, v1alpha1.OaatRunStatus{
				Phase: tt.wantPhase, Reason: tt.wantReason, Message: tt.wantMessage, PodName: pod.Name,
				ExitCode: ptr.To(tt.wantCode), StartedAt: at(0), FinishedAt: at(time.Hour),
			})}, nil, Decide(withOnDemandRuns(input(recorded, time.Hour), onDemandRun)))
		})
	}
}
