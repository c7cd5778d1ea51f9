package forecast

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// t0 is the forecasts' start, a Saturday noon.
var t0 = builders.T0

func at(d time.Duration) time.Time { return t0.Add(d) }

func stampAt(d time.Duration) *metav1.Time {
	t := metav1.NewTime(at(d))
	return &t
}

// group is a group created a day before t0, with frequency 1h; each item is given as name, when
// it last succeeded (relative to t0) and its recent run time.
func group(items ...item) *v1alpha1.OaatGroup {
	w := builders.Group().Created(-24 * time.Hour).Generation(1)
	for _, it := range items {
		w.Spec.OaatItems = append(w.Spec.OaatItems, it.name)
		st := v1alpha1.ItemStatus{Name: it.name}
		if it.lastSuccess != nil {
			st.LastSuccess = stampAt(*it.lastSuccess)
			st.LastStarted = stampAt(*it.lastSuccess - it.run)
		}
		if it.run > 0 {
			st.RecentRunSeconds = []int64{int64(it.run / time.Second)}
		}
		w.ItemStatus(st)
	}
	return w.Obj()
}

// hourly is group with spec.schedule "0 * * * *" instead of a frequency, its round started at t0.
func hourly(items ...item) *v1alpha1.OaatGroup {
	g := group(items...)
	g.Spec.Frequency, g.Spec.Schedule = "", "0 * * * *"
	g.Status.RoundStartedAt, g.Status.NextRoundAt = stampAt(0), stampAt(time.Hour)
	return g
}

// item is an item of group.
type item struct {
	name        string
	lastSuccess *time.Duration
	run         time.Duration
}

func ago(d time.Duration) *time.Duration {
	d = -d
	return &d
}

func input(g *v1alpha1.OaatGroup) planner.Input {
	in := planner.Input{Group: g, Type: builders.Type().Obj(), Now: t0}
	if v := g.Spec.Verify; v != nil {
		in.VerifyType = builders.Type().Obj()
		in.VerifyType.Name = v.OaatType
	}
	return in
}

// ran is a predicted run of item from start for d.
func ran(item string, start, d time.Duration) Run {
	return Run{Item: item, Start: at(start), End: at(start + d), Result: v1alpha1.ResultSucceeded}
}

// verified is run as a verification.
func verified(run Run) Run {
	run.Verify = true
	return run
}

// runningPod is the pod of run `run` of item as the operator creates it, running since start.
func runningPod(g *v1alpha1.OaatGroup, item string, run int64, start time.Duration) corev1.Pod {
	return builders.RunPod(g, builders.Type().Obj().Spec.Template, item, run).Running(stampAt(start)).Value()
}
