package planner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// overLongLines is a ConfigMap key of n lines, each too long to be an item.
func overLongLines(n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("%04d%s", i, strings.Repeat("x", 296))
	}
	return strings.Join(lines, "\n")
}

// checkBounded fails when a message of the plan is longer than the API server accepts, with a
// margin: conditions and on-demand runs within message.MaxCondition, events within 1 KiB.
func checkBounded(t *testing.T, p Plan) {
	t.Helper()
	for _, c := range p.Status.Conditions {
		if len(c.Message) > message.MaxCondition {
			t.Errorf("condition %s: %d bytes", c.Type, len(c.Message))
		}
	}
	for _, e := range p.Events {
		if len(e.Message) > message.MaxEvent {
			t.Errorf("event %s: %d bytes", e.Reason, len(e.Message))
		}
	}
	for _, u := range append(append([]OnDemandRunUpdate{}, p.FinalOnDemandRuns...), p.OpenOnDemandRuns...) {
		if len(u.Status.Message) > message.MaxOnDemandRun {
			t.Errorf("on-demand run %s: %d bytes", u.OnDemandRun.Name, len(u.Status.Message))
		}
	}
}

func TestDecideBoundsEveryMessage(t *testing.T) {
	t.Run("items skipped, some valid", func(t *testing.T) {
		g := newGroup()
		g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "huge", Key: "list"}}}
		in := withConfigMaps(input(g, 0), map[string]*corev1.ConfigMap{"huge": itemSource(map[string]string{"list": overLongLines(1000) + "\na\nb"})})
		p := Decide(withOnDemandRuns(in, newOnDemandRun("waiting", "backups", "b", 0)))
		checkBounded(t, p)
		c := condition(t, p, v1alpha1.ConditionItemsValid)
		if c.Status != metav1.ConditionFalse || !strings.HasSuffix(c.Message, "; and 995 more") {
			t.Fatalf("ItemsValid = %.300s", c.Message)
		}
		if p.Create == nil || p.Status.ItemCount != 2 {
			t.Fatalf("the valid items do not run: itemCount %d, create %v", p.Status.ItemCount, p.Create != nil)
		}
		// The same problems are not reported again.
		created := *p.Create.DeepCopy()
		created.Status.Phase = corev1.PodRunning
		if again := Decide(withConfigMaps(input(applied(g, p), time.Second, created), in.ConfigMaps)); len(again.Events) != 0 {
			t.Fatalf("events again: %v", reasons(again))
		}
	})
	t.Run("no valid item", func(t *testing.T) {
		g := newGroup()
		g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "huge", Key: "list"}}}
		in := withConfigMaps(input(g, 0), map[string]*corev1.ConfigMap{"huge": itemSource(map[string]string{"list": overLongLines(1000)})})
		p := Decide(withOnDemandRuns(in, newOnDemandRun("waiting", "backups", "b", 0)))
		checkBounded(t, p)
		if c := condition(t, p, v1alpha1.ConditionReady); c.Reason != string(v1alpha1.ReasonInvalidSpec) || !strings.Contains(c.Message, "and 995 more") {
			t.Fatalf("Ready = %.300s", c.Message)
		}
	})
	t.Run("a pod's long status message", func(t *testing.T) {
		g := newGroup("a")
		running(t, g, "a", 1, at(0))
		g.Status.CurrentRun.OaatRun = "now"
		onDemandRun := newOnDemandRun("now", "backups", "a", 0)
		onDemandRun.Status = v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunInProgress, PodName: g.Status.CurrentRun.PodName}
		pod := finished(runPod(t, g, "a", 1, corev1.PodFailed), 1, "Error", at(time.Minute))
		pod.Status.Message = strings.Repeat("evicted ", 10000)
		p := Decide(withOnDemandRuns(input(g, time.Minute, pod), onDemandRun))
		checkBounded(t, p)
		if len(p.FinalOnDemandRuns) != 1 || !strings.HasSuffix(p.FinalOnDemandRuns[0].Status.Message, "…") {
			t.Fatalf("final on-demand runs %v", updates(p.FinalOnDemandRuns))
		}
	})
}
