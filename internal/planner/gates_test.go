package planner

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// succeededItem is the status entry of item that started at start and succeeded at end, in its
// first run of pod.
func succeededItem(item, pod string, start, end time.Duration) v1alpha1.ItemStatus {
	return v1alpha1.ItemStatus{Name: item, LastStarted: at(start), LastSuccess: at(end), LastExitCode: ptr.To[int32](0),
		LastReason: "Completed", LastResult: v1alpha1.ResultSucceeded, LastPodName: pod, RecentRunSeconds: []int64{int64((end - start) / time.Second)}}
}

// succeededEvent is the event of item's success in pod.
func succeededEvent(item, pod string) Event {
	return Event{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunSucceeded,
		Message: fmt.Sprintf("Item %q succeeded in pod %s: Completed, exit code 0", item, pod)}
}

func TestDecideSuspend(t *testing.T) {
	pauseText := "Annotation " + v1alpha1.AnnotationPauseNewJobs + ` is "true": no new item starts`
	tests := []struct {
		name       string
		suspend    func(g *v1alpha1.OaatGroup)
		wantReason v1alpha1.Reason
		wantText   string
	}{
		{"spec.suspend", func(g *v1alpha1.OaatGroup) { g.Spec.Suspend = true }, v1alpha1.ReasonSpecSuspend, "spec.suspend is true: no new item starts"},
		{"pause_new_jobs", func(g *v1alpha1.OaatGroup) {
			g.Annotations = map[string]string{v1alpha1.AnnotationPauseNewJobs: "true"}
		}, v1alpha1.ReasonPauseAnnotation, pauseText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGroup("a", "b")
			tt.suspend(g)
			running(t, g, "a", 1, at(0))
			pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(time.Minute))

			// The running item finishes and is recorded; nothing new starts, and nothing wakes the
			// group up.
			a := succeededItem("a", pod.Name, 0, time.Minute)
			a.WaitReason = v1alpha1.WaitSuspended
			suspended := cond(v1alpha1.ConditionSuspended, metav1.ConditionTrue, tt.wantReason, tt.wantText, time.Minute)
			p := Decide(input(g, time.Minute, pod))
			checkPlan(t, Plan{
				Status: v1alpha1.OaatGroupStatus{
					ObservedGeneration: 1,
					Conditions:         []metav1.Condition{readyCond(2, time.Minute), suspended, idleCond(time.Minute)},
					RunCount:           1, ItemCount: 2,
					Items: []v1alpha1.ItemStatus{a, {Name: "b", WaitReason: v1alpha1.WaitSuspended}},
				},
				Events: []Event{succeededEvent("a", pod.Name),
					{Type: corev1.EventTypeNormal, Reason: tt.wantReason, Message: tt.wantText}},
				Finished: []Outcome{{Item: "a", Result: v1alpha1.ResultSucceeded, Duration: time.Minute}},
				Untrack:  []*corev1.Pod{&pod},
			}, p)

			resumed := applied(g, p)
			resumed.Spec.Suspend = false
			resumed.Annotations = nil
			a.NextEligibleAt, a.WaitReason = at(time.Hour+time.Minute), v1alpha1.WaitSucceededRecently
			checkPlan(t, Plan{
				Status: v1alpha1.OaatGroupStatus{
					ObservedGeneration: 1,
					Conditions: []metav1.Condition{readyCond(2, time.Minute),
						cond(v1alpha1.ConditionSuspended, metav1.ConditionFalse, v1alpha1.ReasonResumed, "New items may start", 2*time.Minute),
						runningCond(g, "b", 2, 2*time.Minute)},
					CurrentRun: currentRun(g, "b", 2, 2*time.Minute),
					RunCount:   2, ItemCount: 2,
					Items: []v1alpha1.ItemStatus{a, {Name: "b", LastStarted: at(2 * time.Minute), WaitReason: v1alpha1.WaitRunning}},
				},
				Events:  []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonResumed, Message: "New items may start"}},
				Create:  newPod(t, g, "b", 2),
				Untrack: []*corev1.Pod{&pod},
			}, Decide(input(resumed, 2*time.Minute, pod)))
		})
	}
}

func TestDecidePauseNewJobsNeedsTrue(t *testing.T) {
	// pause_new_jobs: "yes" does not suspend the group, only "true" does; a group never
	// suspended has no Suspended condition.
	g := newGroup("a")
	g.Annotations = map[string]string{v1alpha1.AnnotationPauseNewJobs: "yes"}
	checkStartsA(t, g)
}

func TestDecideEachOnce(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.Mode = v1alpha1.ModeEachOnce
	itemStatus(g, "a").LastSuccess = at(-2 * time.Hour)
	running(t, g, "b", 2, at(0))
	pod := finished(runPod(t, g, "b", 2, corev1.PodSucceeded), 0, "Completed", at(time.Minute))

	// Every item has succeeded: the group is complete, starts nothing and needs no wake-up.
	allText := "All 2 items have succeeded in this round; set annotation " + v1alpha1.AnnotationReset + " to a new value to run them again"
	a := v1alpha1.ItemStatus{Name: "a", LastSuccess: at(-2 * time.Hour), WaitReason: v1alpha1.WaitDone}
	b := succeededItem("b", pod.Name, 0, time.Minute)
	b.WaitReason = v1alpha1.WaitDone
	completeCond := cond(v1alpha1.ConditionComplete, metav1.ConditionTrue, v1alpha1.ReasonAllSucceeded, allText, time.Minute)
	p := Decide(input(g, time.Minute, pod))
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, time.Minute), completeCond, idleCond(time.Minute)},
			RunCount:           2, ItemCount: 2, Items: []v1alpha1.ItemStatus{a, b},
		},
		Events:   []Event{succeededEvent("b", pod.Name), {Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonAllSucceeded, Message: allText}},
		Finished: []Outcome{{Item: "b", Result: v1alpha1.ResultSucceeded, Duration: time.Minute}},
		Untrack:  []*corev1.Pod{&pod},
	}, p)

	// Much later, still nothing: done items do not come back with their frequency.
	complete := applied(g, p)
	checkPlan(t, Plan{Status: complete.Status, Untrack: []*corev1.Pod{&pod}}, Decide(input(complete, 24*time.Hour, pod)))

	// An added item runs; the group is not complete until it has succeeded.
	added := complete.DeepCopy()
	added.Spec.OaatItems = append(added.Spec.OaatItems, "c")
	pendingText := `1 of 3 items have not succeeded in this round: "c"`
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{readyCond(3, time.Minute),
				cond(v1alpha1.ConditionComplete, metav1.ConditionFalse, v1alpha1.ReasonItemsPending, pendingText, 2*time.Minute),
				runningCond(g, "c", 3, 2*time.Minute)},
			CurrentRun: currentRun(g, "c", 3, 2*time.Minute),
			RunCount:   3, ItemCount: 3,
			Items: []v1alpha1.ItemStatus{a, b, {Name: "c", LastStarted: at(2 * time.Minute), WaitReason: v1alpha1.WaitRunning}},
		},
		Create:  newPod(t, g, "c", 3),
		Untrack: []*corev1.Pod{&pod},
	}, Decide(input(added, 2*time.Minute, pod)))

	// A reset starts a new round: every item runs again.
	reset := complete.DeepCopy()
	reset.Annotations = map[string]string{v1alpha1.AnnotationReset: "2026-11-21T14:00"}
	p = Decide(input(reset, 2*time.Hour, pod))
	againA := a
	againA.LastStarted, againA.WaitReason = at(2*time.Hour), v1alpha1.WaitRunning
	againB := b
	againB.WaitReason = ""
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{readyCond(2, time.Minute),
				cond(v1alpha1.ConditionComplete, metav1.ConditionFalse, v1alpha1.ReasonItemsPending,
					`2 of 2 items have not succeeded in this round: "a", "b"`, 2*time.Hour),
				runningCond(g, "a", 3, 2*time.Hour)},
			CurrentRun: currentRun(g, "a", 3, 2*time.Hour),
			RunCount:   3, ItemCount: 2, Items: []v1alpha1.ItemStatus{againA, againB},
			ObservedReset: "2026-11-21T14:00", RoundStartedAt: at(2 * time.Hour),
		},
		Events: []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonGroupReset,
			Message: "Annotation " + v1alpha1.AnnotationReset + ` is "2026-11-21T14:00": a new round starts and parked items are released`}},
		Create:  newPod(t, g, "a", 3),
		Untrack: []*corev1.Pod{&pod},
	}, p)
	// The same annotation value is not a new reset: the run goes on.
	next := applied(reset, p)
	runA := *p.Create
	runA.Status.Phase = corev1.PodRunning
	checkPlan(t, Plan{Status: next.Status, Untrack: []*corev1.Pod{&pod}}, Decide(input(next, 2*time.Hour+time.Second, pod, runA)))
}

func TestDecideContinuousHasNoCompleteCondition(t *testing.T) {
	g := newGroup("a")
	g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionComplete, Status: metav1.ConditionTrue, Reason: string(v1alpha1.ReasonAllSucceeded)}}
	checkStartsA(t, g)
}

func TestNameList(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	if got, want := nameList(names[:2]), `"a", "b"`; got != want {
		t.Fatalf("nameList = %s, want %s", got, want)
	}
	if got, want := nameList(names), `"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", and 2 more`; got != want {
		t.Fatalf("nameList = %s, want %s", got, want)
	}
}

// checkStartsA checks the whole plan of a group of the one item a, nothing recorded: it starts a
// at once, with no condition but Ready and Running.
func checkStartsA(t *testing.T, g *v1alpha1.OaatGroup) {
	t.Helper()
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, 0), runningCond(g, "a", 1, 0)},
			CurrentRun:         currentRun(g, "a", 1, 0),
			RunCount:           1, ItemCount: 1,
			Items: []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(0), WaitReason: v1alpha1.WaitRunning}},
		},
		Create: newPod(t, g, "a", 1),
	}, Decide(input(g, 0)))
}
