package planner

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestPodCreateFailedBacksOff(t *testing.T) {
	g := newGroup("a")
	p := Decide(input(g, 0))
	g = applied(g, p)
	event := setPodCreateFailed(&g.Status, t0, errors.New("quota exceeded"))
	text := `Creating pod ` + podName(g, "a", 1) + ` for item "a" failed: quota exceeded`
	failedSince := func(since time.Duration) metav1.Condition {
		return cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonPodCreateFailed, text, since)
	}
	if diff := cmp.Diff(Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonPodCreateFailed, Message: text}, event); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}

	// Within the wait: nothing starts.
	idle := v1alpha1.OaatGroupStatus{
		ObservedGeneration: 1, Conditions: []metav1.Condition{failedSince(0), idleCond(0)},
		RunCount: 1, ItemCount: 1, Items: []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(0)}},
	}
	checkPlan(t, Plan{Status: idle, RequeueAfter: 3 * time.Second}, Decide(input(g, 2*time.Second)))
	// At the retry time a new attempt starts; Ready stays False until its pod is seen.
	p = Decide(input(g, 5*time.Second))
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1, Conditions: []metav1.Condition{failedSince(0), runningCond(g, "a", 2, 5*time.Second)},
			CurrentRun: currentRun(g, "a", 2, 5*time.Second), RunCount: 2, ItemCount: 1,
			Items: []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(5 * time.Second), WaitReason: v1alpha1.WaitRunning}},
		},
		Create: newPod(t, g, "a", 2),
	}, p)
	// It fails again: the next wait is longer (10s since the first failure, so 10s after +5s).
	g = applied(g, p)
	setPodCreateFailed(&g.Status, t0.Add(5*time.Second), errors.New("quota exceeded"))
	if p = Decide(input(g, 6*time.Second)); p.Create != nil || p.RequeueAfter != 4*time.Second {
		t.Fatalf("second wait: create %v, requeueAfter %v; want none, 4s", p.Create != nil, p.RequeueAfter)
	}
	// The third attempt's pod exists: Ready again.
	p = Decide(input(g, 10*time.Second))
	g = applied(g, p)
	pod := *p.Create
	pod.Status.Phase = corev1.PodPending
	p = Decide(input(g, 11*time.Second, pod))
	if c := condition(t, p, v1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready once a pod exists = %+v", c)
	}
}

// While the API server refuses the group's status (Ready says StatusRejected), a run is tried
// again only once the retry wait after the last refused attempt is over, whatever wakes the group
// before: each attempt asks the group's locks for a slot, and a pass within the wait withdraws the
// request (status.lockWait), each of which the locks' reconcilers answer with a write that wakes
// the group (issue 25, defect 2).
func TestStatusRefusedPacesTheStarts(t *testing.T) {
	g := newGroup("a")
	g = applied(g, Decide(input(g, 0)))
	g.Status.CurrentRun = nil // the start's status was refused: as last written, no run
	p := Plan{now: t0}
	g.Status = p.StatusRejected(g.Status, errors.New("status.currentRun: Invalid value")).Status

	for _, tc := range []struct {
		name      string
		refused   time.Duration // when the last attempt was refused, after the first refusal
		now       time.Duration
		wantStart bool
	}{
		{name: "within the wait after the first refusal", refused: 0, now: 4 * time.Second},
		{name: "after the wait after the first refusal", refused: 0, now: 5 * time.Second, wantStart: true},
		{name: "the wait grows with the refusal's age", refused: 40 * time.Second, now: 79 * time.Second},
		{name: "after the grown wait", refused: 40 * time.Second, now: 80 * time.Second, wantStart: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := input(g, tc.now)
			in.StatusRefusedAt = t0.Add(tc.refused)
			p := Decide(in)
			if started := p.Create != nil; started != tc.wantStart {
				t.Errorf("started = %v, want %v (requeueAfter %v)", started, tc.wantStart, p.RequeueAfter)
			}
			if !tc.wantStart && p.RequeueAfter != t0.Add(tc.refused).Add(retryWait(tc.refused)).Sub(t0.Add(tc.now)) {
				t.Errorf("requeueAfter = %v, want the end of the retry wait", p.RequeueAfter)
			}
		})
	}
	// A process that has not seen a refusal (it started afresh) tries once.
	if p := Decide(input(g, time.Second)); p.Create == nil {
		t.Error("no attempt without a refusal seen by this process")
	}
}

// TestStatusRefusedKeepsItsAgeWhileAskingLocks: a group naming a lock whose retry wait is over
// first only asks its lock. That pass keeps Ready saying StatusRejected, with the time it first
// did (no Ready event): the write of the request would otherwise reset the refusal's age, and the
// wait between attempts would never grow past the first. The pass the lock grants starts the run
// and says Ready.
func TestStatusRefusedKeepsItsAgeWhileAskingLocks(t *testing.T) {
	g := newGroup("a")
	g.Spec.Locks = []string{"nas"}
	p := Plan{now: t0}
	g.Status = p.StatusRejected(g.Status, errors.New("status.currentRun: Invalid value")).Status
	rejected := *meta.FindStatusCondition(g.Status.Conditions, v1alpha1.ConditionReady)

	in := lockedInput(g, 80*time.Second, []*v1alpha1.OaatLock{builders.Lock("nas", 1)}, nil)
	in.StatusRefusedAt = t0.Add(40 * time.Second)
	asked := Decide(in)
	if asked.Status.LockWait == nil || asked.Create != nil {
		t.Fatalf("the pass after the wait: lockWait %+v, create %v; want a request and no start", asked.Status.LockWait, asked.Create)
	}
	if ready := meta.FindStatusCondition(asked.Status.Conditions, v1alpha1.ConditionReady); ready == nil || *ready != rejected {
		t.Errorf("Ready %+v while only asking the lock, want it kept as %+v", ready, rejected)
	}
	for _, e := range asked.Events {
		if e.Reason == v1alpha1.ReasonReady {
			t.Errorf("event %+v while only asking the lock", e)
		}
	}

	g.Status = asked.Status
	in = lockedInput(g, 81*time.Second, []*v1alpha1.OaatLock{builders.Lock("nas", 1, grant(asked.Status.LockWait.Pod))}, nil)
	in.StatusRefusedAt = t0.Add(40 * time.Second)
	started := Decide(in)
	if started.Create == nil {
		t.Fatalf("the pass the lock grants starts nothing (lockWait %+v)", started.Status.LockWait)
	}
	if ready := meta.FindStatusCondition(started.Status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v on the start, want True", ready)
	}
}
