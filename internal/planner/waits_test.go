package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestDecideWritesWhyEachItemWaits(t *testing.T) {
	g := newGroup("ok", "failed", "backedOff", "fresh", "running")
	g.Spec.Backoff = &v1alpha1.Backoff{Policy: v1alpha1.BackoffExponential, MaxCoolOff: "30m"}
	itemStatus(g, "ok").LastSuccess = at(-10 * time.Minute)
	failed := itemStatus(g, "failed")
	failed.LastFailure, failed.FailureCount = at(-time.Minute), 1
	backedOff := itemStatus(g, "backedOff")
	backedOff.LastFailure, backedOff.FailureCount = at(-time.Minute), 3
	itemStatus(g, "fresh")
	running(t, g, "running", 1, at(-time.Minute))
	pod := runPod(t, g, "running", 1, corev1.PodRunning)

	// No wake-up while an item runs.
	checkPlan(t, Plan{Status: runningStatus(g, "running", 1, -time.Minute, 0,
		v1alpha1.ItemStatus{Name: "ok", LastSuccess: at(-10 * time.Minute), NextEligibleAt: at(50 * time.Minute), WaitReason: v1alpha1.WaitSucceededRecently},
		v1alpha1.ItemStatus{Name: "failed", LastFailure: at(-time.Minute), FailureCount: 1, NextEligibleAt: at(9 * time.Minute), WaitReason: v1alpha1.WaitCoolingOff},
		// 10m x 2^2 = 40m, capped at 30m
		v1alpha1.ItemStatus{Name: "backedOff", LastFailure: at(-time.Minute), FailureCount: 3, NextEligibleAt: at(29 * time.Minute), WaitReason: v1alpha1.WaitCoolingOff},
		v1alpha1.ItemStatus{Name: "fresh"},
	)}, reorder(Decide(input(g, 0, pod)), "running"))
}

func TestDecideBlackoutHoldsEveryItem(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "11:00", End: "13:00", Days: []v1alpha1.Weekday{"Sat"}}}
	itemStatus(g, "b").LastSuccess = at(-10 * time.Minute) // eligible at 12:50, inside the window too

	// Inside the window nothing starts; every item waits for its end at 13:00.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, 10*time.Minute), idleCond(10 * time.Minute)},
			ItemCount:          2, Items: []v1alpha1.ItemStatus{
				{Name: "a", NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitBlackout},
				{Name: "b", LastSuccess: at(-10 * time.Minute), NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitBlackout},
			},
		},
		RequeueAfter: 50 * time.Minute,
	}, Decide(input(g, 10*time.Minute)))
	// When it ends item a starts (b is eligible too, since 12:50); 2026-11-21 is a Saturday: on
	// other days the window does not open, and b waits for its frequency.
	startsA := func(now time.Duration, b v1alpha1.ItemStatus) Plan {
		return Plan{Status: runningStatus(g, "a", 1, now, now, b), Create: newPod(t, g, "a", 1)}
	}
	checkPlan(t, startsA(time.Hour, v1alpha1.ItemStatus{Name: "b", LastSuccess: at(-10 * time.Minute)}), Decide(input(g, time.Hour)))
	g.Spec.BlackoutWindows[0].Days = []v1alpha1.Weekday{"Mon", "Tue", "Wed", "Thu", "Fri", "Sun"}
	checkPlan(t, startsA(10*time.Minute, v1alpha1.ItemStatus{Name: "b", LastSuccess: at(-10 * time.Minute),
		NextEligibleAt: at(50 * time.Minute), WaitReason: v1alpha1.WaitSucceededRecently}), Decide(input(g, 10*time.Minute)))
}

func TestDecideAvoidOverrun(t *testing.T) {
	g := newGroup("long", "short")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:30", End: "13:00", AvoidOverrun: true}}
	long := itemStatus(g, "long")
	long.LastSuccess, long.RecentRunSeconds = at(-2*time.Hour), []int64{600, 1900, 60}
	short := itemStatus(g, "short")
	short.LastSuccess, short.RecentRunSeconds = at(-90*time.Minute), []int64{600}

	// The item that fits before 12:30 starts; long, which takes up to 1900s, waits for 13:00.
	want := runningStatus(g, "short", 1, 0, 0, v1alpha1.ItemStatus{Name: "long", LastSuccess: at(-2 * time.Hour),
		RecentRunSeconds: []int64{600, 1900, 60}, NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitOverrun})
	want.Items[0].LastSuccess, want.Items[0].RecentRunSeconds = at(-90*time.Minute), []int64{600}
	checkPlan(t, Plan{Status: want, Create: newPod(t, g, "short", 1)}, reorder(Decide(input(g, 0)), "short"))
}

func TestDecideKeepsRecentRunDurations(t *testing.T) {
	g := newGroup("a")
	itemStatus(g, "a").RecentRunSeconds = []int64{1, 2, 3, 4, 5}
	running(t, g, "a", 1, at(0))
	pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(42*time.Second))

	// The oldest of five goes.
	want := v1alpha1.ItemStatus{Name: "a", LastStarted: at(0), LastSuccess: at(42 * time.Second), LastExitCode: ptr.To[int32](0),
		LastReason: "Completed", LastResult: v1alpha1.ResultSucceeded, LastPodName: pod.Name, RecentRunSeconds: []int64{2, 3, 4, 5, 42}}
	if diff := cmp.Diff(want, planItem(t, Decide(input(g, time.Minute, pod)), "a"), cmpopts.IgnoreFields(v1alpha1.ItemStatus{}, "NextEligibleAt", "WaitReason")); diff != "" {
		t.Errorf("item a (-want +got):\n%s", diff)
	}
}

func TestDecidePodHistory(t *testing.T) {
	two, none := int32(2), int32(0)
	g := newGroup("a")
	g.Spec.PodHistory = &v1alpha1.PodHistory{Succeeded: &two, Failed: &none}
	g.Spec.ExitCodes = &v1alpha1.ExitCodes{Success: []int32{3}}
	g.Status.RunCount = 5
	itemStatus(g, "a").LastSuccess = at(0)
	s1 := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(0))
	f2 := finished(runPod(t, g, "a", 2, corev1.PodFailed), 1, "Error", at(0))
	s3 := finished(runPod(t, g, "a", 3, corev1.PodSucceeded), 0, "Completed", at(0))
	s4 := finished(runPod(t, g, "a", 4, corev1.PodFailed), 3, "Error", at(0)) // exit code 3 counts as success

	// Two successes kept (s4's exit code counting as one), no failure.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, time.Minute), idleCond(time.Minute)},
			RunCount:           5, ItemCount: 1,
			Items: []v1alpha1.ItemStatus{{Name: "a", LastSuccess: at(0), NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitSucceededRecently}},
		},
		DeleteBatch:  []*corev1.Pod{&f2, &s1},
		RequeueAfter: 59 * time.Minute,
		Untrack:      []*corev1.Pod{&s1, &f2, &s3, &s4},
	}, Decide(input(g, time.Minute, s1, f2, s3, s4)))
}

// Deciding again on the persisted status changes nothing and says nothing: every control's
// status is a function of the cluster's state, not of how often the group is looked at.
func TestDecideIsIdempotent(t *testing.T) {
	scenarios := map[string]func(g *v1alpha1.OaatGroup){
		"blackout": func(g *v1alpha1.OaatGroup) {
			g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "11:00", End: "13:00", StopRunning: true, AvoidOverrun: true}}
		},
		"suspended": func(g *v1alpha1.OaatGroup) { g.Spec.Suspend = true },
		"each once": func(g *v1alpha1.OaatGroup) {
			g.Spec.Mode = v1alpha1.ModeEachOnce
			g.Annotations = map[string]string{v1alpha1.AnnotationReset: "1"}
		},
		"backoff": func(g *v1alpha1.OaatGroup) {
			g.Spec.Backoff = &v1alpha1.Backoff{Policy: v1alpha1.BackoffExponential}
			it := itemStatus(g, "b")
			it.LastFailure, it.FailureCount, it.ParkedGeneration = at(-time.Minute), 4, 1
		},
	}
	for name, setUp := range scenarios {
		t.Run(name, func(t *testing.T) {
			g := newGroup("a", "b")
			setUp(g)
			first := Decide(input(g, 0))
			var pods []corev1.Pod
			if first.Create != nil {
				created := *first.Create.DeepCopy()
				created.Status.Phase = corev1.PodRunning
				pods = append(pods, created)
			}
			// The same status, no event, nothing to create or delete; the wake-up is not compared
			// (30s later, it is 30s nearer).
			again := Decide(input(applied(g, first), 30*time.Second, pods...))
			if diff := cmp.Diff(Plan{Status: first.Status}, again, append(planOpts, cmpopts.IgnoreFields(Plan{}, "RequeueAfter"))...); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// reorder moves the status entry of item first, as runningStatus lists it.
func reorder(p Plan, item string) Plan {
	items := p.Status.Items
	for i := range items {
		if items[i].Name == item {
			p.Status.Items = append([]v1alpha1.ItemStatus{items[i]}, append(items[:i:i], items[i+1:]...)...)
			break
		}
	}
	return p
}
