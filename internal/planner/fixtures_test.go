package planner

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time {
	t := metav1.NewTime(t0.Add(d))
	return &t
}

func newGroup(items ...string) *v1alpha1.OaatGroup {
	return &v1alpha1.OaatGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "backups", Namespace: "ns", UID: types.UID("group-uid"), Generation: 1},
		Spec: v1alpha1.OaatGroupSpec{
			OaatType: "sleeper", OaatItems: items, Frequency: "1h", FailureCoolOff: "10m",
		},
	}
}

func newType() *v1alpha1.OaatType {
	return &v1alpha1.OaatType{
		ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: "ns"},
		Spec: v1alpha1.OaatTypeSpec{Type: v1alpha1.OaatTypePod, Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox", Args: []string{"{{oaat_item}}"}}}},
		}},
	}
}

// runPod is the pod of run `run` of item, as the operator creates it, in the given phase.
func runPod(t *testing.T, g *v1alpha1.OaatGroup, item string, run int64, phase corev1.PodPhase) corev1.Pod {
	t.Helper()
	pod, err := podbuild.Build(podbuild.Input{Group: g, Template: newType().Spec.Template, Item: item, Run: run})
	if err != nil {
		t.Fatalf("building pod: %v", err)
	}
	pod.UID = types.UID(pod.Name)
	pod.Status.Phase = phase
	return *pod
}

// finished sets the pod's container to have terminated with code at the time.
func finished(pod corev1.Pod, code int32, reason string, end *metav1.Time) corev1.Pod {
	pod.Status.StartTime = at(0)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:  "main",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: *end}},
	}}
	return pod
}

// running makes the status say that run `run` of item runs in its pod since start.
func running(t *testing.T, g *v1alpha1.OaatGroup, item string, run int64, start *metav1.Time) {
	t.Helper()
	g.Status.RunCount = run
	g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: item, PodName: podbuild.Name(g.Name, item, run), StartedAt: *start}
	it := itemStatus(g, item)
	it.LastStarted = start
}

func itemStatus(g *v1alpha1.OaatGroup, item string) *v1alpha1.ItemStatus {
	for i := range g.Status.Items {
		if g.Status.Items[i].Name == item {
			return &g.Status.Items[i]
		}
	}
	g.Status.Items = append(g.Status.Items, v1alpha1.ItemStatus{Name: item})
	return &g.Status.Items[len(g.Status.Items)-1]
}

func input(g *v1alpha1.OaatGroup, now time.Duration, pods ...corev1.Pod) Input {
	return Input{Group: g, Type: newType(), Pods: pods, Now: t0.Add(now), Rand: rand.New(rand.NewPCG(1, 1))}
}

func planItem(t *testing.T, p Plan, name string) v1alpha1.ItemStatus {
	t.Helper()
	for _, it := range p.Status.Items {
		if it.Name == name {
			return it
		}
	}
	t.Fatalf("no status entry for item %q in %+v", name, p.Status.Items)
	return v1alpha1.ItemStatus{}
}

func condition(t *testing.T, p Plan, condType string) metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(p.Status.Conditions, condType)
	if c == nil {
		t.Fatalf("no %s condition in %+v", condType, p.Status.Conditions)
	}
	return *c
}

// reasons are the reasons of every event of the plan, in the order the controller emits them.
func reasons(p Plan) []string {
	var rs []string
	for _, e := range p.Events {
		rs = append(rs, e.Reason)
	}
	for _, d := range p.Delete {
		if d.Event != nil {
			rs = append(rs, d.Event.Reason)
		}
	}
	return rs
}

// deleted are the pods the plan deletes in this pass, alone (Delete) or together (DeleteBatch),
// each as "name rogue=BOOL".
func deleted(p Plan) []string {
	var names []string
	for _, d := range p.Delete {
		names = append(names, d.Pod.Name+" rogue="+strconv.FormatBool(d.Event != nil))
	}
	for _, pod := range p.DeleteBatch {
		names = append(names, pod.Name+" rogue=false")
	}
	return names
}

// applied returns the group as it is after the plan's status is persisted.
func applied(g *v1alpha1.OaatGroup, p Plan) *v1alpha1.OaatGroup {
	next := g.DeepCopy()
	next.Status = *p.Status.DeepCopy()
	return next
}
