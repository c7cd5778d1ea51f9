package planner

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	p := s.decide()
	if p.Create != nil || p.RequeueAfter != time.Hour {
		t.Fatalf("before the first tick: create %v, requeueAfter %s", p.Create != nil, p.RequeueAfter)
	}
	for _, name := range []string{"a", "b", "c"} {
		if it := planItem(t, p, name); it.WaitReason != v1alpha1.WaitNextTick || !it.NextEligibleAt.Equal(at(time.Hour)) {
			t.Fatalf("item %s = %+v, want NextTick at %s", name, it, at(time.Hour))
		}
	}
	if !p.Status.NextRoundAt.Equal(at(time.Hour)) || p.Status.RoundStartedAt != nil {
		t.Fatalf("status: nextRoundAt %v, roundStartedAt %v", p.Status.NextRoundAt, p.Status.RoundStartedAt)
	}

	// Three days of ticks: each item runs once per tick, a failure is retried after the cool-off.
	s.fail = map[string]int{"b": 1}
	s.now = t0.Add(time.Hour)
	s.until(t0.Add(2*24*time.Hour + 12*time.Hour))
	counts := map[string]int{}
	for _, item := range s.ran {
		counts[item]++
	}
	if counts["a"] != 3 || counts["b"] != 4 || counts["c"] != 3 {
		t.Fatalf("runs in three rounds (b failing once) = %v (%v), want a 3, b 4, c 3", counts, s.ran)
	}
	if s.overruns != 0 {
		t.Fatalf("%d overruns of rounds that completed in minutes", s.overruns)
	}
	st := s.last.Status
	if !st.RoundStartedAt.Equal(at(2*24*time.Hour+time.Hour)) || !st.NextRoundAt.Equal(at(3*24*time.Hour+time.Hour)) {
		t.Fatalf("roundStartedAt %s, nextRoundAt %s", st.RoundStartedAt, st.NextRoundAt)
	}
	if meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionRoundOverrun) != nil {
		t.Fatal("a RoundOverrun condition without an overrun")
	}
	// The frequency does not hold items of a scheduled group: the next tick does.
	if it := planItem(t, s.last, "a"); it.WaitReason != v1alpha1.WaitNextTick {
		t.Fatalf("item a between rounds = %+v", it)
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
	p := s.decide()
	c := condition(t, p, v1alpha1.ConditionRoundOverrun)
	if c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonRoundOverrun || !strings.Contains(c.Message, `2 items of the previous round not yet succeeded`) ||
		!strings.Contains(c.Message, `"b", "c"`) {
		t.Fatalf("RoundOverrun = %+v", c)
	}
	if !p.RoundOverrun || !slices.Contains(reasons(p), v1alpha1.ReasonRoundOverrun) || !p.Status.RoundStartedAt.Equal(at(25*time.Hour)) {
		t.Fatalf("plan: roundOverrun %v, events %v, roundStartedAt %s", p.RoundOverrun, reasons(p), p.Status.RoundStartedAt)
	}
	// The late item goes first; the one still cooling off waits for its cool-off.
	if p.Create == nil || p.Status.CurrentRun.Item != "b" {
		t.Fatalf("first run of the merged round: %+v", p.Status.CurrentRun)
	}
	if it := planItem(t, p, "c"); it.WaitReason != v1alpha1.WaitCoolingOff {
		t.Fatalf("item c = %+v", it)
	}

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
	if c := condition(t, s.last, v1alpha1.ConditionRoundOverrun); c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRoundCompleted {
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
		zone     string
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
			p := Decide(input(g, 2*time.Hour))
			c := condition(t, p, v1alpha1.ConditionReady)
			if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonInvalidSpec || c.Message != tt.want {
				t.Fatalf("Ready = %+v, want False InvalidSpec %q", c, tt.want)
			}
			if p.Create != nil || !slices.Contains(reasons(p), v1alpha1.ReasonInvalidSpec) {
				t.Fatalf("create %v, events %v", p.Create != nil, reasons(p))
			}
		})
	}
}

func TestDecideScheduleRemoved(t *testing.T) {
	g := scheduledGroup("a")
	g.Status.RoundStartedAt, g.Status.NextRoundAt = at(-23*time.Hour), at(time.Hour)
	meta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionRoundOverrun, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRoundOverrun, Message: "late",
	})
	g.Spec.Schedule, g.Spec.Frequency = "", "1h"
	p := Decide(input(g, 0))
	if p.Status.NextRoundAt != nil || meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionRoundOverrun) != nil {
		t.Fatalf("without a schedule: nextRoundAt %v, conditions %+v", p.Status.NextRoundAt, p.Status.Conditions)
	}
	if p.Create == nil {
		t.Fatal("the group with a frequency again did not start its item")
	}
}

// Status keeps whole seconds: a run started and ended in the second its round started is that
// round's success, not a reason to run the item again.
func TestDecideScheduleSuccessInTheRoundsFirstSecond(t *testing.T) {
	g := scheduledGroup("a")
	g.Status.RoundStartedAt, g.Status.NextRoundAt = at(time.Hour), at(25*time.Hour)
	a := itemStatus(g, "a")
	a.LastStarted, a.LastSuccess = at(time.Hour), at(time.Hour)
	p := Decide(input(g, time.Hour+time.Minute))
	if p.Create != nil {
		t.Fatal("ran again the item that succeeded in the round's first second")
	}
	if it := planItem(t, p, "a"); it.WaitReason != v1alpha1.WaitNextTick || !it.NextEligibleAt.Equal(at(25*time.Hour)) {
		t.Fatalf("item a = %+v", it)
	}
}
