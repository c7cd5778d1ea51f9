package forecast

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// t0 is the forecasts' start, a Saturday noon.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func stampAt(d time.Duration) *metav1.Time {
	t := metav1.NewTime(at(d))
	return &t
}

// group is a group created a day before t0, with frequency 1h; each item is given as name, when
// it last succeeded (relative to t0) and its recent run time.
func group(items ...item) *v1alpha1.OaatGroup {
	g := &v1alpha1.OaatGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "backups", Namespace: "ns", UID: types.UID("group-uid"), Generation: 1,
			CreationTimestamp: metav1.NewTime(at(-24 * time.Hour))},
		Spec: v1alpha1.OaatGroupSpec{OaatType: "sleeper", Frequency: "1h"},
	}
	for _, it := range items {
		g.Spec.OaatItems = append(g.Spec.OaatItems, it.name)
		st := v1alpha1.ItemStatus{Name: it.name}
		if it.lastSuccess != nil {
			st.LastSuccess = stampAt(*it.lastSuccess)
			st.LastStarted = stampAt(*it.lastSuccess - it.run)
		}
		if it.run > 0 {
			st.RecentRunSeconds = []int64{int64(it.run / time.Second)}
		}
		g.Status.Items = append(g.Status.Items, st)
	}
	g.Status.ObservedGeneration = 1
	return g
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

func sleeper() *v1alpha1.OaatType {
	return &v1alpha1.OaatType{
		ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: "ns"},
		Spec: v1alpha1.OaatTypeSpec{Type: v1alpha1.OaatTypePod, Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox", Args: []string{"{{oaat_item}}"}}}},
		}},
	}
}

func input(g *v1alpha1.OaatGroup) planner.Input {
	return planner.Input{Group: g, Type: sleeper(), Now: t0}
}

// ran is a predicted run of item from start for d.
func ran(item string, start, d time.Duration) Run {
	return Run{Item: item, Start: at(start), End: at(start + d), Result: planner.ResultSucceeded}
}

// runningPod is the pod of run `run` of item as the operator creates it, running since start.
func runningPod(t *testing.T, g *v1alpha1.OaatGroup, item string, run int64, start time.Duration) corev1.Pod {
	t.Helper()
	pod, err := podbuild.Build(podbuild.Input{Group: g, Template: sleeper().Spec.Template, Item: item, Run: run})
	if err != nil {
		t.Fatalf("building pod: %v", err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: stampAt(start)}
	return *pod
}
