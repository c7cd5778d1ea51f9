package forecast

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// steadyGroup is a group of n items that each run a minute, every item succeeding within its
// frequency (two minutes per item): the run of item-0 has just ended, its pod succeeded, and the
// pass that records it starts the next item, a pass for which a forecast is due (the group has no
// condition AtRisk yet).
func steadyGroup(b *testing.B, n int) planner.Input {
	b.Helper()
	var items []item
	for i := range n {
		items = append(items, item{fmt.Sprintf("item-%d", i), ago(time.Duration(2*n-i+1) * time.Minute), time.Minute})
	}
	g := group(items...)
	g.Spec.Frequency = v1alpha1.Duration(fmt.Sprintf("%dm", 2*n))
	g.Status.RunCount = 1
	g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "item-0", PodName: podbuild.Name("backups", "item-0", 1), StartedAt: *stampAt(-time.Minute)}
	pod := runningPod(g, "item-0", 1, -time.Minute)
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: metav1.NewTime(t0)}}}}
	in := input(g)
	in.Pods = []corev1.Pod{pod}
	in.Rand = fixedRand{}
	return in
}

// BenchmarkDecide measures a reconcile's decision alone, for the groups of BenchmarkForecast.
func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		in := steadyGroup(b, n)
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				planner.Decide(in)
			}
		})
	}
}

// BenchmarkForecast measures the forecaster's work for one group, condition AtRisk from a pass's
// snapshot and plan (AtRisk: the full horizon of a day, until every item is assessed), as the
// plain play makes it and with every pass through Decide (replay, the only way for a group that
// is not plain: a schedule, windows, locks).
func BenchmarkForecast(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		in := steadyGroup(b, n)
		first := planner.Decide(in)
		b.Run(fmt.Sprintf("items=%d/plain", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AtRisk(in, first)
			}
		})
		b.Run(fmt.Sprintf("items=%d/replay", n), func(b *testing.B) {
			b.ReportAllocs()
			opts := ConditionOptions(n)
			opts.Replay = true
			for b.Loop() {
				conditionOf(in.Group, Simulate(in, first, opts), in.Now)
			}
		})
	}
}

// TestSteadyGroupForecast checks the benchmark's group: on time, the forecast reaching every item.
func TestSteadyGroupForecast(t *testing.T) {
	in := steadyGroup(&testing.B{}, 10)
	plan := planner.Decide(in)
	if len(plan.Finished) != 1 || plan.Finished[0].Result != v1alpha1.ResultSucceeded || plan.Create == nil {
		t.Fatalf("the pass records %+v and creates %v: want the success of item-0 recorded and the next run started", plan.Finished, plan.Create != nil)
	}
	f := Simulate(in, plan, ConditionOptions(10))
	if f.Stop != StopAssessed || f.Passes > 2*10+2 || len(Assess(in.Group, f)) != 0 {
		t.Errorf("stop %s after %d passes, risks %v: want every item assessed on time, in about two passes a run", f.Stop, f.Passes, Assess(in.Group, f))
	}
	if !isPlain(in, ConditionOptions(10)) {
		t.Error("the benchmark's group is not plain: its plain case would measure a replay")
	}
}
