package planner

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

var (
	t0 = builders.T0
	at = builders.At
)

// newGroup is the planner tests' group: the builders' with spec.failureCoolOff 10m.
func newGroup(items ...string) *v1alpha1.OaatGroup {
	return builders.Group(items...).FailureCoolOff("10m").Obj()
}

func newType() *v1alpha1.OaatType { return builders.Type().Obj() }

// runPod is the pod of run `run` of item, as the operator creates it, in the given phase.
func runPod(t *testing.T, g *v1alpha1.OaatGroup, item string, run int64, phase corev1.PodPhase) corev1.Pod {
	t.Helper()
	return builders.RunPod(g, newType().Spec.Template, item, run).Phase(phase).Value()
}

// finished sets the pod's container to have terminated with code at the time.
func finished(pod corev1.Pod, code int32, reason string, end *metav1.Time) corev1.Pod {
	return (&builders.PodWrapper{Pod: pod}).Finished(code, reason, end).Value()
}

// running makes the status say that run `run` of item runs in its pod since start.
func running(t *testing.T, g *v1alpha1.OaatGroup, item string, run int64, start *metav1.Time) {
	t.Helper()
	builders.WrapGroup(g).Running(item, run, start)
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
func reasons(p Plan) []v1alpha1.Reason {
	var rs []v1alpha1.Reason
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

// planOpts compare whole Plans: the decision's own time (unexported) aside, and an empty list
// equal to none. Nothing else is volatile: the time and the random source are the test's.
var planOpts = []cmp.Option{cmpopts.IgnoreUnexported(Plan{}), cmpopts.EquateEmpty()}

// checkPlan fails the test with the difference between the whole plan wanted and the one made.
func checkPlan(t *testing.T, want, got Plan) {
	t.Helper()
	if diff := cmp.Diff(want, got, planOpts...); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

// cond is a condition of the group of generation 1 as a plan sets it, changed at since.
func cond(condType string, status metav1.ConditionStatus, reason v1alpha1.Reason, text string, since time.Duration) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: string(reason), Message: text,
		LastTransitionTime: *at(since), ObservedGeneration: 1}
}

// readyCond is condition Ready of a group of the OaatType sleeper with n items.
func readyCond(n int, since time.Duration) metav1.Condition {
	return cond(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady,
		fmt.Sprintf("OaatType sleeper found, %d items", n), since)
}

// runningCond is condition Running for run `run` of item of the group g.
func runningCond(g *v1alpha1.OaatGroup, item string, run int64, since time.Duration) metav1.Condition {
	return cond(v1alpha1.ConditionRunning, metav1.ConditionTrue, v1alpha1.ReasonItemRunning,
		fmt.Sprintf("Item %q runs in pod %s", item, podbuild.Name(g.Name, item, run)), since)
}

// idleCond is condition Running of a group with no item pod active.
func idleCond(since time.Duration) metav1.Condition {
	return cond(v1alpha1.ConditionRunning, metav1.ConditionFalse, v1alpha1.ReasonIdle, "No item pod is active", since)
}

// newPod is the pod of run `run` of item as the plan creates it.
func newPod(t *testing.T, g *v1alpha1.OaatGroup, item string, run int64) *corev1.Pod {
	t.Helper()
	pod, err := podbuild.Build(podbuild.Input{Group: g, Template: newType().Spec.Template, Item: item, Run: run})
	if err != nil {
		t.Fatalf("building pod: %v", err)
	}
	return pod
}

// currentRun is status.currentRun of run `run` of item of g started at start.
func currentRun(g *v1alpha1.OaatGroup, item string, run int64, start time.Duration) *v1alpha1.CurrentRun {
	return &v1alpha1.CurrentRun{Item: item, PodName: podbuild.Name(g.Name, item, run), StartedAt: *at(start)}
}

// podName is the name of the pod of run `run` of item of g.
func podName(g *v1alpha1.OaatGroup, item string, run int64) string {
	return podbuild.Name(g.Name, item, run)
}

// runningStatus is the status of group g whose run `run` of item started at start and goes on at
// now (Ready, and Running since now), with the other items' entries after the item's.
func runningStatus(g *v1alpha1.OaatGroup, item string, run int64, start, now time.Duration, others ...v1alpha1.ItemStatus) v1alpha1.OaatGroupStatus {
	items := append([]v1alpha1.ItemStatus{{Name: item, LastStarted: at(start), WaitReason: v1alpha1.WaitRunning}}, others...)
	return v1alpha1.OaatGroupStatus{
		ObservedGeneration: 1,
		Conditions:         []metav1.Condition{readyCond(len(items), now), runningCond(g, item, run, now)},
		CurrentRun:         currentRun(g, item, run, start),
		RunCount:           run, ItemCount: int32(len(items)), Items: items,
	}
}
