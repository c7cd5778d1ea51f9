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

// parkView is what spec.maxConsecutiveFailures decides about item a once its run has ended.
type parkView struct {
	FailureCount int32
	Parked       bool
	Wait         v1alpha1.WaitReason
	Events       []v1alpha1.Reason // the plan's event reasons
}

func parkViewOf(t *testing.T, p Plan) parkView {
	t.Helper()
	a := planItem(t, p, "a")
	return parkView{FailureCount: a.FailureCount, Parked: a.ParkedGeneration != 0, Wait: a.WaitReason, Events: reasons(p)}
}

// TestMaxConsecutiveFailures runs one pass of Decide for the end of a run of item a, whose
// failures since its last success were `before`, in a group of generation 3 whose items cool
// off 10m: the item parks when a failure that counts brings its count to the limit, and only then.
func TestMaxConsecutiveFailures(t *testing.T) {
	failed := func(t *testing.T, g *v1alpha1.OaatGroup) corev1.Pod {
		t.Helper()
		return finished(runPod(t, g, "a", 1, corev1.PodFailed), 1, "Error", at(time.Minute))
	}
	for _, tc := range []struct {
		name   string
		limit  int32
		before int32
		setup  func(g *v1alpha1.OaatGroup)
		pod    func(t *testing.T, g *v1alpha1.OaatGroup) corev1.Pod
		want   parkView
	}{
		{name: "below the limit: retried after its cool-off", limit: 3, before: 1, pod: failed,
			want: parkView{FailureCount: 2, Wait: v1alpha1.WaitCoolingOff, Events: []v1alpha1.Reason{v1alpha1.ReasonRunFailed}}},
		{name: "the failure that reaches the limit parks", limit: 3, before: 2, pod: failed,
			want: parkView{FailureCount: 3, Parked: true, Wait: v1alpha1.WaitParked,
				Events: []v1alpha1.Reason{v1alpha1.ReasonRunFailed, v1alpha1.ReasonItemParked, v1alpha1.ReasonItemsParked}}},
		{name: "a limit of 1 parks at the first failure", limit: 1, before: 0, pod: failed,
			want: parkView{FailureCount: 1, Parked: true, Wait: v1alpha1.WaitParked,
				Events: []v1alpha1.Reason{v1alpha1.ReasonRunFailed, v1alpha1.ReasonItemParked, v1alpha1.ReasonItemsParked}}},
		{name: "an item unparked above the limit parks at its next failure", limit: 3, before: 5, pod: failed,
			want: parkView{FailureCount: 6, Parked: true, Wait: v1alpha1.WaitParked,
				Events: []v1alpha1.Reason{v1alpha1.ReasonRunFailed, v1alpha1.ReasonItemParked, v1alpha1.ReasonItemsParked}}},
		{name: "without a limit an item is never parked", limit: 0, before: 50, pod: failed,
			want: parkView{FailureCount: 51, Wait: v1alpha1.WaitCoolingOff, Events: []v1alpha1.Reason{v1alpha1.ReasonRunFailed}}},
		{name: "a success clears the count", limit: 3, before: 2,
			pod: func(t *testing.T, g *v1alpha1.OaatGroup) corev1.Pod {
				t.Helper()
				return finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(time.Minute))
			},
			want: parkView{FailureCount: 0, Wait: v1alpha1.WaitSucceededRecently, Events: []v1alpha1.Reason{v1alpha1.ReasonRunSucceeded}}},
		{name: "a disruption does not count", limit: 3, before: 2,
			pod: func(t *testing.T, g *v1alpha1.OaatGroup) corev1.Pod {
				t.Helper()
				return finished(disrupt(runPod(t, g, "a", 1, corev1.PodFailed), "EvictionByEvictionAPI"), 137, "Error", at(time.Minute))
			},
			// Not parked, it runs again at once, as an interrupted item does.
			want: parkView{FailureCount: 2, Wait: v1alpha1.WaitRunning, Events: []v1alpha1.Reason{v1alpha1.ReasonRunInterrupted}}},
		{name: "a failed probe of the open breaker does not count, even at the limit", limit: 3, before: 3,
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 3, ProbeInterval: "1m", MaxProbeInterval: "4m"}
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedAt: at(-time.Hour)}
			},
			pod:  failed,
			want: parkView{FailureCount: 3, Wait: v1alpha1.WaitBreakerOpen, Events: []v1alpha1.Reason{v1alpha1.ReasonRunFailed}}},
		{name: "a do-not-retry exit code parks below the limit", limit: 3, before: 0,
			setup: func(g *v1alpha1.OaatGroup) { g.Spec.ExitCodes = &v1alpha1.ExitCodes{DoNotRetry: []int32{1}} },
			pod:   failed,
			want: parkView{FailureCount: 1, Parked: true, Wait: v1alpha1.WaitParked,
				Events: []v1alpha1.Reason{v1alpha1.ReasonRunFailed, v1alpha1.ReasonItemParked, v1alpha1.ReasonItemsParked}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup("a", "b")
			g.Generation = 3
			g.Spec.MaxConsecutiveFailures = tc.limit
			itemStatus(g, "b").LastSuccess = at(0)
			a := itemStatus(g, "a")
			a.FailureCount = tc.before
			if tc.before > 0 {
				a.LastFailure = at(-time.Hour)
			}
			if tc.setup != nil {
				tc.setup(g)
			}
			running(t, g, "a", 1, at(0))
			got := parkViewOf(t, Decide(input(g, time.Minute, tc.pod(t, g))))
			if got.Wait == v1alpha1.WaitBreakerOpen {
				// Only the breaker's own events vary with it; the item's are the ones compared.
				got.Events = slices.DeleteFunc(got.Events, func(r v1alpha1.Reason) bool { return r != v1alpha1.ReasonRunFailed })
			}
			if !equalParkView(got, tc.want) {
				t.Errorf("item a = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func equalParkView(a, b parkView) bool {
	return a.FailureCount == b.FailureCount && a.Parked == b.Parked && a.Wait == b.Wait && slices.Equal(a.Events, b.Events)
}

// TestParkedItemRunsOnDemand: an item parked after its failures runs for an OaatRun (kubectl oaat
// unpark), which unparks it when it starts; a success keeps it unparked, a failure with its
// count still at the limit parks it again. The schedule alone never starts it meanwhile.
func TestParkedItemRunsOnDemand(t *testing.T) {
	parkedGroup := func() *v1alpha1.OaatGroup {
		g := newGroup("a", "b")
		g.Generation = 3
		g.Spec.MaxConsecutiveFailures = 2
		itemStatus(g, "b").LastSuccess = at(0)
		a := itemStatus(g, "a")
		a.FailureCount, a.LastFailure, a.ParkedGeneration = 2, at(0), 3
		return g
	}

	// Hours later, with b not due, nothing starts: a is parked.
	g := parkedGroup()
	p := Decide(input(g, 30*time.Minute))
	if p.Create != nil || planItem(t, p, "a").WaitReason != v1alpha1.WaitParked {
		t.Fatalf("a parked item started, or waits for %q: %+v", planItem(t, p, "a").WaitReason, p.Status.CurrentRun)
	}

	// An OaatRun of it starts it, unparked.
	unpark := newOnDemandRun("unpark-a", g.Name, "a", 31*time.Minute)
	p = Decide(withOnDemandRuns(input(g, 31*time.Minute), unpark))
	if p.Create == nil || p.Status.CurrentRun.Item != "a" || p.Status.CurrentRun.OaatRun != "unpark-a" {
		t.Fatalf("the OaatRun of parked item a did not start it: %+v", p.Status.CurrentRun)
	}
	if a := planItem(t, p, "a"); a.ParkedGeneration != 0 || a.WaitReason != v1alpha1.WaitRunning {
		t.Fatalf("item a running for its OaatRun = %+v, want unparked", a)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionParked); c != nil && c.Status != metav1.ConditionFalse {
		t.Fatalf("Parked = %+v while the unparked item runs", c)
	}
	started := applied(g, p)
	started.Status.CurrentRun.StartedAt = *at(31 * time.Minute)

	for _, tc := range []struct {
		name       string
		phase      corev1.PodPhase
		code       int32
		wantParked bool
		wantCount  int32
	}{
		{name: "its failure parks it again", phase: corev1.PodFailed, code: 1, wantParked: true, wantCount: 3},
		{name: "its success keeps it unparked", phase: corev1.PodSucceeded, code: 0, wantCount: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := finished(runPod(t, started, "a", 1, tc.phase), tc.code, "Error", at(32*time.Minute))
			ended := Decide(withOnDemandRuns(input(started, 32*time.Minute, pod), unpark))
			a := planItem(t, ended, "a")
			if (a.ParkedGeneration == 3) != tc.wantParked || a.FailureCount != tc.wantCount {
				t.Fatalf("item a after its OaatRun = %+v, want parked %v with %d failures", a, tc.wantParked, tc.wantCount)
			}
		})
	}
}
