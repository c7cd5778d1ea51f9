package duepriority

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

var (
	now = builders.T0
	at  = builders.At
)

func TestIdleIsControllerRuntimesLowPriority(t *testing.T) {
	if Idle != handler.LowPriority {
		t.Fatalf("Idle = %d, handler.LowPriority = %d", Idle, handler.LowPriority)
	}
}

func TestDue(t *testing.T) {
	for _, tc := range []struct {
		due  time.Duration
		want int
	}{
		{0, 1},
		{999 * time.Millisecond, 1},
		{time.Second, 2},
		{2 * time.Second, 6},
		// Four levels per doubling: the base, one, then four times the binary logarithm of
		// the seconds, rounded down (19.6 for 30 s, 21.3 for 40 s, 47.2 for an hour).
		{30 * time.Second, 2 + 19},
		{40 * time.Second, 2 + 21},
		{time.Hour, 2 + 47},
		{7 * 24 * time.Hour, 1 + maxLevel},
		{365 * 24 * time.Hour, 1 + maxLevel},
	} {
		if got := Due(tc.due); got != tc.want {
			t.Errorf("Due(%s) = %d, want %d", tc.due, got, tc.want)
		}
	}
	// Due longer never ranks lower, and every due level is above the others.
	prev := Due(0)
	for d := time.Duration(0); d < 30*24*time.Hour; d += d/8 + time.Millisecond {
		p := Due(d)
		if p < prev || p <= Unknown || p <= Idle {
			t.Fatalf("Due(%s) = %d after %d", d, p, prev)
		}
		prev = p
	}
}

// group is a group with items a and b in status, its spec's generation observed.
func group(mutate func(*v1alpha1.OaatGroup)) *v1alpha1.OaatGroup {
	g := builders.Group("a", "b").Named("g").Generation(3).Created(-24 * time.Hour).
		ItemStatus(v1alpha1.ItemStatus{Name: "a", LastSuccess: at(-30 * time.Minute), NextEligibleAt: at(30 * time.Minute), WaitReason: "SucceededRecently"}).
		ItemStatus(v1alpha1.ItemStatus{Name: "b", LastSuccess: at(-20 * time.Minute), NextEligibleAt: at(40 * time.Minute), WaitReason: "SucceededRecently"}).
		Obj()
	if mutate != nil {
		mutate(g)
	}
	return g
}

// runningPod is the pod of the current run in the phase, its container ended at finished (not
// ended when nil).
func runningPod(name string, phase corev1.PodPhase, finished *metav1.Time) *corev1.Pod {
	p := builders.Pod(name).Phase(phase)
	if finished != nil {
		p.Finished(0, "Completed", finished)
	}
	return p.Obj()
}

func withRun(g *v1alpha1.OaatGroup) {
	g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "a", PodName: "g-a-1", StartedAt: *at(-time.Minute)}
	g.Status.Items[0].NextEligibleAt, g.Status.Items[0].WaitReason = nil, "Running"
	g.Status.Items[1].NextEligibleAt, g.Status.Items[1].WaitReason = nil, "Running"
}

func TestDueSince(t *testing.T) {
	for _, tc := range []struct {
		name    string
		group   *v1alpha1.OaatGroup
		run     *corev1.Pod
		runGone bool
		want    *metav1.Time // nil: not due
	}{
		{name: "every item waits for a time to come", group: group(nil)},
		{name: "the earliest wait has passed", group: group(func(g *v1alpha1.OaatGroup) {
			g.Status.Items[0].NextEligibleAt = at(-5 * time.Minute)
			g.Status.Items[1].NextEligibleAt = at(-2 * time.Minute)
		}), want: at(-5 * time.Minute)},
		{name: "eligible at the last write, never started since", group: group(func(g *v1alpha1.OaatGroup) {
			g.Status.Items[1].NextEligibleAt, g.Status.Items[1].WaitReason = nil, ""
			g.Status.Items[1].LastFailure = at(-10 * time.Minute)
		}), want: at(-10 * time.Minute)},
		{name: "an item that never ran is due since the group's creation", group: group(func(g *v1alpha1.OaatGroup) {
			g.Status.Items[1] = v1alpha1.ItemStatus{Name: "b"}
		}), want: at(-24 * time.Hour)},
		{name: "an item the status does not list yet", group: group(func(g *v1alpha1.OaatGroup) {
			g.Spec.OaatItems = append(g.Spec.OaatItems, "c")
		}), want: at(-24 * time.Hour)},
		{name: "a wait without a time (suspended, parked, a lock held)", group: group(func(g *v1alpha1.OaatGroup) {
			g.Status.Items[0].NextEligibleAt, g.Status.Items[0].WaitReason = nil, "Suspended"
			g.Status.Items[1].NextEligibleAt, g.Status.Items[1].WaitReason = nil, "LockHeld"
		})},
		{name: "a changed spec is due now", group: group(func(g *v1alpha1.OaatGroup) { g.Generation = 4 }), want: at(0)},
		{name: "a scheduled round whose start has passed", group: group(func(g *v1alpha1.OaatGroup) {
			g.Status.NextRoundAt = at(-3 * time.Second)
		}), want: at(-3 * time.Second)},
		{name: "a group being deleted", group: group(func(g *v1alpha1.OaatGroup) {
			g.DeletionTimestamp = at(-time.Hour)
			g.Finalizers = []string{"x"}
			g.Status.Items[0].NextEligibleAt = at(-time.Hour)
		})},
		{name: "a run whose pod is not in the cache", group: group(withRun)},
		{name: "a run whose pod runs", group: group(withRun), run: runningPod("g-a-1", corev1.PodRunning, nil)},
		{name: "a run whose pod ended", group: group(withRun),
			run: runningPod("g-a-1", corev1.PodSucceeded, at(-40*time.Second)), want: at(-40 * time.Second)},
		{name: "a run whose pod failed without a finish time", group: group(withRun),
			run: runningPod("g-a-1", corev1.PodFailed, nil), want: at(0)},
		{name: "another pod of the group ended", group: group(withRun),
			run: runningPod("g-b-0", corev1.PodSucceeded, at(-40*time.Second))},
		{name: "a run whose pod is gone", group: group(withRun), runGone: true, want: at(0)},
		{name: "a run whose stop was decided", group: group(func(g *v1alpha1.OaatGroup) {
			withRun(g)
			g.Status.CurrentRun.StopReason = "DeadlineExceeded"
		}), run: runningPod("g-a-1", corev1.PodRunning, nil), want: at(0)},
		{name: "a run past spec.runTimeout", group: group(func(g *v1alpha1.OaatGroup) {
			withRun(g)
			g.Spec.RunTimeout = "20s"
		}), run: runningPod("g-a-1", corev1.PodRunning, nil), want: at(-40 * time.Second)},
		{name: "a run within spec.runTimeout", group: group(func(g *v1alpha1.OaatGroup) {
			withRun(g)
			g.Spec.RunTimeout = "2m"
		}), run: runningPod("g-a-1", corev1.PodRunning, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			since, due := DueSince(tc.group, tc.run, tc.runGone, now)
			switch {
			case tc.want == nil && due:
				t.Fatalf("due since %s, want not due", since)
			case tc.want != nil && !due:
				t.Fatalf("not due, want due since %s", tc.want.Time)
			case tc.want != nil && !since.Equal(tc.want.Time):
				t.Fatalf("due since %s, want %s", since, tc.want.Time)
			}
			wantPriority := Idle
			if tc.want != nil {
				wantPriority = Due(now.Sub(tc.want.Time))
			}
			if p := Priority(tc.group, tc.run, tc.runGone, now); p != wantPriority {
				t.Fatalf("Priority = %d, want %d", p, wantPriority)
			}
		})
	}
}

// TestDueNeverBehindNotDue: whatever the state, a group due now ranks above any group with nothing
// due and above a change of unknown consequence.
func TestDueNeverBehindNotDue(t *testing.T) {
	due := Priority(group(func(g *v1alpha1.OaatGroup) { g.Status.Items[0].NextEligibleAt = at(0) }), nil, false, now)
	for _, other := range []int{Unknown, Priority(group(nil), nil, false, now), Priority(group(withRun), nil, false, now)} {
		if due <= other {
			t.Fatalf("a group due now has priority %d, not above %d", due, other)
		}
	}
}

// TestNeverCreated: a run whose pod was never created is due since the group's previous run ended,
// not since its own intent; the intent bounds it.
func TestNeverCreated(t *testing.T) {
	for _, tc := range []struct {
		name  string
		group *v1alpha1.OaatGroup
		want  int
	}{
		{"due since the previous run's end (b, 20 min ago), not the intent (1 min ago)", group(withRun), Due(20 * time.Minute)},
		{"a run that ended after the intent does not count", group(func(g *v1alpha1.OaatGroup) {
			withRun(g)
			g.Status.Items[1].LastFailure = at(-30 * time.Second)
		}), Due(time.Minute)},
		{"the group's first run: due since its creation", group(func(g *v1alpha1.OaatGroup) {
			withRun(g)
			g.Status.Items[0].LastSuccess, g.Status.Items[1].LastSuccess = nil, nil
		}), Due(24 * time.Hour)},
		{"without a current run, as Priority", group(nil), Idle},
		{"a group being deleted", group(func(g *v1alpha1.OaatGroup) {
			withRun(g)
			g.DeletionTimestamp = at(-time.Hour)
			g.Finalizers = []string{"x"}
		}), Idle},
	} {
		if got := NeverCreated(tc.group, now); got != tc.want {
			t.Errorf("%s: NeverCreated = %d, want %d", tc.name, got, tc.want)
		}
	}
}
