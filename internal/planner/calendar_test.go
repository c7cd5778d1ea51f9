package planner

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// scheduledGroup is a group of items that runs every day at 13:00 UTC (an hour after t0), created
// half an hour before t0.
func scheduledGroup(items ...string) *v1alpha1.OaatGroup {
	g := newGroup(items...)
	g.Spec.Frequency = ""
	g.Spec.Schedule = "0 13 * * *"
	g.CreationTimestamp = *at(-30 * time.Minute)
	return g
}

// simulation plays a group's reconciles: each run it starts ends a minute later with the given
// result (a success unless fail says otherwise for the item), and the next reconcile records it.
type simulation struct {
	t    *testing.T
	g    *v1alpha1.OaatGroup
	pods []corev1.Pod
	now  time.Time
	// fail says, per item, how many of its next runs fail.
	fail map[string]int
	// ran lists the items started, in order; overruns counts the plans that report RoundOverrun.
	ran      []string
	overruns int
	last     Plan
}

// decide makes one decision at the simulation's time and applies it: status persisted, the pod
// created and, a minute later, ended.
func (s *simulation) decide() Plan {
	s.t.Helper()
	p := Decide(Input{Group: s.g, Type: newType(), Pods: s.pods, Now: s.now, Rand: rand.New(rand.NewPCG(1, 1))})
	s.g, s.last = applied(s.g, p), p
	if p.RoundOverrun {
		s.overruns++
	}
	if p.Create != nil {
		pod := *p.Create.DeepCopy()
		pod.UID = types.UID(pod.Name)
		item := p.Status.CurrentRun.Item
		s.ran = append(s.ran, item)
		end := metav1.NewTime(s.now.Add(time.Minute))
		phase, code, reason := corev1.PodSucceeded, int32(0), "Completed"
		if s.fail[item] > 0 {
			s.fail[item]--
			phase, code, reason = corev1.PodFailed, 1, "Error"
		}
		pod.Status.Phase = phase
		pod = finished(pod, code, reason, &end)
		pod.Status.StartTime = &metav1.Time{Time: s.now}
		s.pods = []corev1.Pod{pod}
	}
	return p
}

// until decides at each instant the group asks to be woken, or a minute after a run, up to limit.
func (s *simulation) until(limit time.Time) {
	s.t.Helper()
	for range 100 {
		p := s.decide()
		next := s.now.Add(p.RequeueAfter)
		if p.Create != nil {
			next = s.now.Add(time.Minute)
		}
		if p.RequeueAfter == 0 && p.Create == nil || next.After(limit) {
			return
		}
		s.now = next
	}
	s.t.Fatal("the simulation did not settle in 100 reconciles")
}

func TestDecideScheduleRunsEachItemOncePerTick(t *testing.T) {
	s := &simulation{t: t, g: scheduledGroup("a", "b", "c"), now: t0}

	// Before the first tick after creation nothing runs, and every item says when it will.
	nextTick := func(name string) v1alpha1.ItemStatus {
		return v1alpha1.ItemStatus{Name: name, NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitNextTick}
	}
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(3, 0), idleCond(0)},
			ItemCount:          3, Items: []v1alpha1.ItemStatus{nextTick("a"), nextTick("b"), nextTick("c")},
			NextRoundAt: at(time.Hour),
		},
		RequeueAfter: time.Hour,
	}, s.decide())

	// Three days of ticks: each item runs once per tick, a failure is retried after the cool-off.
	s.fail = map[string]int{"b": 1}
	s.now = t0.Add(time.Hour)
	s.until(t0.Add(2*24*time.Hour + 12*time.Hour))
	counts := map[string]int{}
	for _, item := range s.ran {
		counts[item]++
	}
	// No overrun of rounds that completed in minutes, and no RoundOverrun condition; between
	// rounds, the next tick holds the items, not the frequency.
	day := 24 * time.Hour
	// The last round ran c, a then b (the seeded tie-break), b having failed once in the first.
	round := func(item string, start time.Duration, run int64) v1alpha1.ItemStatus {
		return v1alpha1.ItemStatus{Name: item, LastStarted: at(start), LastSuccess: at(start + time.Minute),
			LastExitCode: ptr.To[int32](0), LastReason: "Completed", LastResult: v1alpha1.ResultSucceeded, LastPodName: podName(s.g, item, run), RecentRunSeconds: []int64{60, 60, 60},
			NextEligibleAt: at(3*day + time.Hour), WaitReason: v1alpha1.WaitNextTick}
	}
	a, b, c := round("a", 2*day+time.Hour+time.Minute, 9), round("b", 2*day+time.Hour+2*time.Minute, 10), round("c", 2*day+time.Hour, 8)
	b.LastFailure, b.RecentRunSeconds = at(time.Hour+3*time.Minute), []int64{60, 60, 60, 60}
	last := s.last.Status
	checkPlan(t, Plan{Status: v1alpha1.OaatGroupStatus{
		ObservedGeneration: 1,
		Conditions:         []metav1.Condition{readyCond(3, 0), idleCond(2*day + time.Hour + 3*time.Minute)},
		RunCount:           10, ItemCount: 3, Items: []v1alpha1.ItemStatus{a, b, c},
		RoundStartedAt: at(2*day + time.Hour), NextRoundAt: at(3*day + time.Hour),
	}}, Plan{Status: last})
	got := struct {
		Runs     map[string]int
		Overruns int
	}{counts, s.overruns}
	if diff := cmp.Diff(struct {
		Runs     map[string]int
		Overruns int
	}{map[string]int{"a": 3, "b": 4, "c": 3}, 0}, got); diff != "" {
		t.Errorf("runs in three rounds, b failing once (-want +got):\n%s", diff)
	}
}

func TestDecideScheduleMissedTicksMakeOneRound(t *testing.T) {
	g := scheduledGroup("a", "b")
	round := at(time.Hour)
	g.Status.RoundStartedAt, g.Status.NextRoundAt = round, at(25*time.Hour)
	itemStatus(g, "a").LastSuccess = at(time.Hour + time.Minute)
	itemStatus(g, "b").LastSuccess = at(time.Hour + 2*time.Minute)

	// The operator comes back four days and an hour later: four ticks passed.
	s := &simulation{t: t, g: g, now: t0.Add(4*24*time.Hour + 2*time.Hour)}
	s.until(s.now.Add(12 * time.Hour))
	if !slices.Equal(s.ran, []string{"a", "b"}) || s.overruns != 0 {
		t.Fatalf("after four missed ticks ran %v with %d overruns, want a, b once each and no overrun", s.ran, s.overruns)
	}
	if !s.last.Status.RoundStartedAt.Equal(at(4*24*time.Hour + time.Hour)) {
		t.Fatalf("roundStartedAt = %s, want the last tick", s.last.Status.RoundStartedAt)
	}
}

func TestDecideScheduleRoundOverrun(t *testing.T) {
	g := scheduledGroup("a", "b", "c")
	g.Status.RoundStartedAt, g.Status.NextRoundAt = at(time.Hour), at(25*time.Hour)
	itemStatus(g, "a").LastSuccess = at(time.Hour + time.Minute)
	itemStatus(g, "b").LastSuccess = at(-23 * time.Hour)
	failed := itemStatus(g, "c")
	failed.LastSuccess, failed.LastFailure, failed.FailureCount = at(-23*time.Hour+time.Minute), at(24*time.Hour), 5
	g.Spec.FailureCoolOff = "2h"

	// The next tick comes while b never ran and c keeps failing: the rounds merge.
	s := &simulation{t: t, g: g, now: t0.Add(25 * time.Hour)}
	// The late item goes first; the one still cooling off waits for its cool-off.
	p := s.decide()
	now := 25 * time.Hour
	text := `The round of 2026-11-22T13:00:00Z started with 2 items of the previous round not yet succeeded: they run first, once each, in this round: "b", "c"`
	overrun := cond(v1alpha1.ConditionRoundOverrun, metav1.ConditionTrue, v1alpha1.ReasonRoundOverrun, text, now)
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{overrun, readyCond(3, now), runningCond(g, "b", 1, now)},
			CurrentRun:         currentRun(g, "b", 1, now), RunCount: 1, ItemCount: 3,
			Items: []v1alpha1.ItemStatus{
				{Name: "a", LastSuccess: at(time.Hour + time.Minute)},
				{Name: "b", LastSuccess: at(-23 * time.Hour), LastStarted: at(now), WaitReason: v1alpha1.WaitRunning},
				{Name: "c", LastSuccess: at(-23*time.Hour + time.Minute), LastFailure: at(24 * time.Hour), FailureCount: 5,
					NextEligibleAt: at(26 * time.Hour), WaitReason: v1alpha1.WaitCoolingOff},
			},
			RoundStartedAt: at(now), NextRoundAt: at(49 * time.Hour),
		},
		Events:       []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRoundOverrun, Message: text}},
		Create:       newPod(t, g, "b", 1),
		RoundOverrun: true,
		RequeueAfter: 24 * time.Hour,
	}, p)
	c := overrun

	// A spec edit meanwhile: the condition is observed in the new generation, since unchanged.
	edited := applied(g, p)
	edited.Generation = 2
	if c2 := condition(t, Decide(input(edited, 25*time.Hour+30*time.Second)), v1alpha1.ConditionRoundOverrun); c2.ObservedGeneration != 2 ||
		!c2.LastTransitionTime.Equal(&c.LastTransitionTime) || c2.Status != metav1.ConditionTrue {
		t.Fatalf("RoundOverrun after a spec edit = %+v", c2)
	}

	// The overrun is reported once, and the condition clears when the merged round completes.
	s.now = s.now.Add(time.Minute)
	s.until(s.now.Add(12 * time.Hour))
	if s.overruns != 1 {
		t.Fatalf("overrun reported %d times", s.overruns)
	}
	if !slices.Equal(s.ran, []string{"b", "a", "c"}) {
		t.Fatalf("merged round ran %v, want b, a, then c after its cool-off, once each", s.ran)
	}
	if c := condition(t, s.last, v1alpha1.ConditionRoundOverrun); c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonRoundCompleted) {
		t.Fatalf("RoundOverrun after the merged round = %+v", c)
	}
}

func TestDecideScheduleJitter(t *testing.T) {
	g := scheduledGroup("a")
	g.Spec.Jitter = "30m"
	p := Decide(input(g, 0))
	next := p.Status.NextRoundAt
	if next == nil || next.Before(at(time.Hour)) || !next.Before(at(time.Hour+30*time.Minute)) {
		t.Fatalf("nextRoundAt = %v, want within 30m after the tick at %s", next, at(time.Hour))
	}
	// A restart decides the same start.
	if again := Decide(input(g, 10*time.Minute)).Status.NextRoundAt; !again.Equal(next) {
		t.Fatalf("nextRoundAt after a restart = %s, want %s", again, next)
	}
	// Another group draws another delay.
	other := g.DeepCopy()
	other.Name = "other"
	if Decide(input(other, 0)).Status.NextRoundAt.Equal(next) {
		t.Fatal("two groups got the same delay; pick other names if this ever collides")
	}
	if next.After(t0.Add(time.Hour)) {
		if p := Decide(input(g, next.Sub(t0)-time.Second)); p.Create != nil {
			t.Fatal("started before the jittered start of the round")
		}
	}
	if p := Decide(input(g, next.Sub(t0))); p.Create == nil {
		t.Fatal("did not start at the jittered start of the round")
	}
}

func TestDecideScheduleInvalid(t *testing.T) {
	tests := []struct {
		name     string
		schedule v1alpha1.CronSchedule
		zone     v1alpha1.TimeZone
		jitter   v1alpha1.Duration
		want     string
	}{
		{name: "minute out of range", schedule: "61 * * * *", want: `spec.schedule "61 * * * *": end of range (61) above maximum (59): 61`},
		{name: "unknown zone", schedule: "@daily", zone: "Mars/Olympus", want: `spec.scheduleTimeZone "Mars/Olympus": unknown time zone Mars/Olympus`},
		{name: "never", schedule: "0 0 31 4 *", want: `spec.schedule "0 0 31 4 *" matches no date`},
		{name: "jitter", schedule: "@daily", jitter: "5 parsecs", want: `spec.jitter: invalid duration "5 parsecs": unknown unit "parsecs": use s, m, h, d or w, or a long form such as sec, min, hours, days or weeks`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := scheduledGroup("a")
			g.Spec.Schedule, g.Spec.ScheduleTimeZone, g.Spec.Jitter = tt.schedule, tt.zone, tt.jitter
			// Not Ready, and nothing starts; the spec is read again in 5s.
			checkPlan(t, Plan{
				Status: v1alpha1.OaatGroupStatus{
					ObservedGeneration: 1,
					Conditions: []metav1.Condition{
						cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, tt.want, 2*time.Hour), idleCond(2 * time.Hour)},
					ItemCount: 1, Items: []v1alpha1.ItemStatus{{Name: "a"}},
				},
				Events:       []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonInvalidSpec, Message: tt.want}},
				RequeueAfter: 5 * time.Second,
			}, Decide(input(g, 2*time.Hour)))
		})
	}
}

func TestDecideScheduleRemoved(t *testing.T) {
	g := scheduledGroup("a")
	g.Status.RoundStartedAt, g.Status.NextRoundAt = at(-23*time.Hour), at(time.Hour)
	meta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionRoundOverrun, Status: metav1.ConditionTrue, Reason: string(v1alpha1.ReasonRoundOverrun), Message: "late",
	})
	g.Spec.Schedule, g.Spec.Frequency = "", "1h"
	// Without a schedule: no next round, no RoundOverrun condition, and the item starts by its
	// frequency.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, 0), runningCond(g, "a", 1, 0)},
			CurrentRun:         currentRun(g, "a", 1, 0), RunCount: 1, ItemCount: 1,
			Items:          []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(0), WaitReason: v1alpha1.WaitRunning}},
			RoundStartedAt: at(-23 * time.Hour),
		},
		Create: newPod(t, g, "a", 1),
	}, Decide(input(g, 0)))
}

// Status keeps whole seconds: a run started and ended in the second its round started is that
// round's success, not a reason to run the item again.
func TestDecideScheduleSuccessInTheRoundsFirstSecond(t *testing.T) {
	g := scheduledGroup("a")
	g.Status.RoundStartedAt, g.Status.NextRoundAt = at(time.Hour), at(25*time.Hour)
	a := itemStatus(g, "a")
	a.LastStarted, a.LastSuccess = at(time.Hour), at(time.Hour)
	now := time.Hour + time.Minute
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, now), idleCond(now)},
			ItemCount:          1, Items: []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(time.Hour), LastSuccess: at(time.Hour),
				NextEligibleAt: at(25 * time.Hour), WaitReason: v1alpha1.WaitNextTick}},
			RoundStartedAt: at(time.Hour), NextRoundAt: at(25 * time.Hour),
		},
		RequeueAfter: 24*time.Hour - time.Minute,
	}, Decide(input(g, now)))
}
