package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestDecideSuspend(t *testing.T) {
	tests := []struct {
		name       string
		suspend    func(g *v1alpha1.OaatGroup)
		wantReason string
	}{
		{"spec.suspend", func(g *v1alpha1.OaatGroup) { g.Spec.Suspend = true }, v1alpha1.ReasonSpecSuspend},
		{"pause_new_jobs", func(g *v1alpha1.OaatGroup) {
			g.Annotations = map[string]string{v1alpha1.AnnotationPauseNewJobs: "true"}
		}, v1alpha1.ReasonPauseAnnotation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGroup("a", "b")
			tt.suspend(g)
			running(t, g, "a", 1, at(0))
			pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(time.Minute))

			// The running item finishes and is recorded; nothing new starts.
			p := Decide(input(g, time.Minute, pod))
			if planItem(t, p, "a").LastSuccess == nil || p.Create != nil || p.RequeueAfter != 0 {
				t.Fatalf("suspended: a = %+v, create %v, requeueAfter %v", planItem(t, p, "a"), p.Create != nil, p.RequeueAfter)
			}
			if c := condition(t, p, v1alpha1.ConditionSuspended); c.Status != metav1.ConditionTrue || c.Reason != tt.wantReason {
				t.Fatalf("Suspended = %+v", c)
			}
			if b := planItem(t, p, "b"); b.WaitReason != v1alpha1.WaitSuspended || b.NextEligibleAt != nil {
				t.Fatalf("item b = %+v", b)
			}
			if !slices.Contains(reasons(p), tt.wantReason) {
				t.Fatalf("no %s event: %v", tt.wantReason, reasons(p))
			}

			resumed := applied(g, p)
			resumed.Spec.Suspend = false
			resumed.Annotations = nil
			p = Decide(input(resumed, 2*time.Minute, pod))
			if p.Create == nil || p.Status.CurrentRun.Item != "b" {
				t.Fatalf("resumed: currentRun %+v", p.Status.CurrentRun)
			}
			if c := condition(t, p, v1alpha1.ConditionSuspended); c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonResumed {
				t.Fatalf("Suspended = %+v", c)
			}
		})
	}
}

func TestDecidePauseNewJobsNeedsTrue(t *testing.T) {
	g := newGroup("a")
	g.Annotations = map[string]string{v1alpha1.AnnotationPauseNewJobs: "yes"}
	p := Decide(input(g, 0))
	if p.Create == nil {
		t.Fatal(`pause_new_jobs: "yes" suspended the group; only "true" does`)
	}
	if meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionSuspended) != nil {
		t.Fatal("a group never suspended has a Suspended condition")
	}
}

func TestDecideEachOnce(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.Mode = v1alpha1.ModeEachOnce
	itemStatus(g, "a").LastSuccess = at(-2 * time.Hour)
	running(t, g, "b", 2, at(0))
	pod := finished(runPod(t, g, "b", 2, corev1.PodSucceeded), 0, "Completed", at(time.Minute))

	p := Decide(input(g, time.Minute, pod))
	if p.Create != nil || p.RequeueAfter != 0 {
		t.Fatalf("a complete group starts %v, requeues after %v", p.Create != nil, p.RequeueAfter)
	}
	if c := condition(t, p, v1alpha1.ConditionComplete); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonAllSucceeded {
		t.Fatalf("Complete = %+v", c)
	}
	if !slices.Equal(reasons(p), []string{v1alpha1.ReasonRunSucceeded, v1alpha1.ReasonAllSucceeded}) {
		t.Fatalf("events = %v", reasons(p))
	}
	if a := planItem(t, p, "a"); a.WaitReason != v1alpha1.WaitDone {
		t.Fatalf("item a = %+v", a)
	}

	// Much later, still nothing: done items do not come back with their frequency.
	complete := applied(g, p)
	if again := Decide(input(complete, 24*time.Hour, pod)); again.Create != nil || len(again.Events) != 0 {
		t.Fatalf("a day later: create %v, events %v", again.Create != nil, reasons(again))
	}

	// An added item runs; the group is not complete until it has succeeded.
	added := complete.DeepCopy()
	added.Spec.OaatItems = append(added.Spec.OaatItems, "c")
	p = Decide(input(added, 2*time.Minute, pod))
	if p.Create == nil || p.Status.CurrentRun.Item != "c" {
		t.Fatalf("added item c does not start: %+v", p.Status.CurrentRun)
	}
	if c := condition(t, p, v1alpha1.ConditionComplete); c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonItemsPending {
		t.Fatalf("Complete = %+v", c)
	}

	// A reset starts a new round: every item runs again.
	reset := complete.DeepCopy()
	reset.Annotations = map[string]string{v1alpha1.AnnotationReset: "2026-11-21T14:00"}
	p = Decide(input(reset, 2*time.Hour, pod))
	if p.Create == nil || p.Status.ObservedReset != "2026-11-21T14:00" || !p.Status.RoundStartedAt.Equal(at(2*time.Hour)) {
		t.Fatalf("after the reset: create %v, observedReset %q, roundStartedAt %v", p.Create != nil, p.Status.ObservedReset, p.Status.RoundStartedAt)
	}
	if !slices.Contains(reasons(p), v1alpha1.ReasonGroupReset) {
		t.Fatalf("no GroupReset event: %v", reasons(p))
	}
	// The same annotation value is not a new reset.
	if again := Decide(input(applied(reset, p), 2*time.Hour+time.Second, pod)); slices.Contains(reasons(again), v1alpha1.ReasonGroupReset) {
		t.Fatal("the same reset value reset the group twice")
	}
}

func TestDecideContinuousHasNoCompleteCondition(t *testing.T) {
	g := newGroup("a")
	g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionComplete, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonAllSucceeded}}
	p := Decide(input(g, 0))
	if meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionComplete) != nil {
		t.Fatal("mode Continuous keeps a Complete condition")
	}
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
