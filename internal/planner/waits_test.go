package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

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

	p := Decide(input(g, 0, pod))
	want := map[string]struct {
		reason string
		at     time.Duration // zero: no time
	}{
		"ok":        {v1alpha1.WaitSucceededRecently, 50 * time.Minute},
		"failed":    {v1alpha1.WaitCoolingOff, 9 * time.Minute},
		"backedOff": {v1alpha1.WaitCoolingOff, 29 * time.Minute}, // 10m x 2^2 = 40m, capped at 30m
		"fresh":     {"", 0},
		"running":   {v1alpha1.WaitRunning, 0},
	}
	for name, w := range want {
		it := planItem(t, p, name)
		if it.WaitReason != w.reason || (w.at == 0) != (it.NextEligibleAt == nil) || (w.at != 0 && !it.NextEligibleAt.Equal(at(w.at))) {
			t.Errorf("item %s waits %q until %v, want %q until +%v", name, it.WaitReason, it.NextEligibleAt, w.reason, w.at)
		}
	}
	if p.RequeueAfter != 0 {
		t.Fatalf("requeues after %v while an item runs", p.RequeueAfter)
	}
}

func TestDecideBlackoutHoldsEveryItem(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "11:00", End: "13:00", Days: []v1alpha1.Weekday{"Sat"}}}
	itemStatus(g, "b").LastSuccess = at(-10 * time.Minute) // eligible at 12:50, inside the window too

	p := Decide(input(g, 10*time.Minute))
	if p.Create != nil {
		t.Fatal("started an item inside a blackout window")
	}
	for _, name := range []string{"a", "b"} {
		if it := planItem(t, p, name); it.WaitReason != v1alpha1.WaitBlackout || !it.NextEligibleAt.Equal(at(time.Hour)) {
			t.Fatalf("item %s = %+v, want Blackout until 13:00", name, it)
		}
	}
	if p.RequeueAfter != 50*time.Minute {
		t.Fatalf("requeueAfter = %v, want the window's end", p.RequeueAfter)
	}
	if after := Decide(input(g, time.Hour)); after.Create == nil {
		t.Fatal("nothing starts when the window ends")
	}
	// 2026-11-21 is a Saturday: on other days the window does not open.
	g.Spec.BlackoutWindows[0].Days = []v1alpha1.Weekday{"Mon", "Tue", "Wed", "Thu", "Fri", "Sun"}
	if other := Decide(input(g, 10*time.Minute)); other.Create == nil {
		t.Fatal("a window for other days held the group")
	}
}

func TestDecideAvoidOverrun(t *testing.T) {
	g := newGroup("long", "short")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "12:30", End: "13:00", AvoidOverrun: true}}
	long := itemStatus(g, "long")
	long.LastSuccess, long.RecentRunSeconds = at(-2*time.Hour), []int64{600, 1900, 60}
	short := itemStatus(g, "short")
	short.LastSuccess, short.RecentRunSeconds = at(-90*time.Minute), []int64{600}

	p := Decide(input(g, 0))
	if p.Create == nil || p.Status.CurrentRun.Item != "short" {
		t.Fatalf("currentRun %+v, want the item that fits before 12:30 (long takes up to 1900s)", p.Status.CurrentRun)
	}
	if it := planItem(t, p, "long"); it.WaitReason != v1alpha1.WaitOverrun || !it.NextEligibleAt.Equal(at(time.Hour)) {
		t.Fatalf("item long = %+v, want Overrun until 13:00", it)
	}
}

func TestDecideKeepsRecentRunDurations(t *testing.T) {
	g := newGroup("a")
	itemStatus(g, "a").RecentRunSeconds = []int64{1, 2, 3, 4, 5}
	running(t, g, "a", 1, at(0))
	pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(42*time.Second))

	p := Decide(input(g, time.Minute, pod))
	if got, want := planItem(t, p, "a").RecentRunSeconds, []int64{2, 3, 4, 5, 42}; !slices.Equal(got, want) {
		t.Fatalf("recentRunSeconds = %v, want %v", got, want)
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

	p := Decide(input(g, time.Minute, s1, f2, s3, s4))
	if want := []string{f2.Name + " rogue=false", s1.Name + " rogue=false"}; !slices.Equal(deleted(p), want) {
		t.Fatalf("deleted %v, want %v", deleted(p), want)
	}
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
			again := Decide(input(applied(g, first), 30*time.Second, pods...))
			if !equality.Semantic.DeepEqual(first.Status, again.Status) || len(again.Events) != 0 {
				t.Fatalf("status changed or events repeated:\n%+v\n%+v\nevents %v", first.Status, again.Status, reasons(again))
			}
		})
	}
}
