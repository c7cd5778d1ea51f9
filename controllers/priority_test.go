package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duepriority"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// TestPrioritizedQueuesDueLongestFirst feeds the handlers the events of a restart (each group and
// each pod as the informers list them, groups first, in name order) into controller-runtime's
// priority queue, and reads the order in which the queue hands the groups out.
func TestPrioritizedQueuesDueLongestFirst(t *testing.T) {
	ended := func(g *v1alpha1.OaatGroup, ago time.Duration) *corev1.Pod {
		pod := builders.Pod(g.Name+"-a-1").OfGroup(g.Name).Phase(corev1.PodSucceeded).Finished(0, "Completed", builders.At(-ago)).Obj()
		builders.WrapGroup(g).RunningIn("a", pod.Name, builders.At(-time.Hour))
		return pod
	}
	waiting := func(g *v1alpha1.OaatGroup, eligibleIn time.Duration) {
		next := metav1.NewTime(builders.T0.Add(eligibleIn))
		g.Status.Items = []v1alpha1.ItemStatus{{Name: "a", NextEligibleAt: &next, WaitReason: "SucceededRecently"}}
	}
	observed := func(name string) *v1alpha1.OaatGroup { return builders.Group("a").Named(name).Generation(1).Obj() }

	a, b, c, d, e := observed("a"), observed("b"), observed("c"), observed("d"), observed("e")
	waiting(a, time.Minute)         // not due
	podB := ended(b, 5*time.Second) // its pod ended 5 s ago
	waiting(c, -10*time.Minute)     // eligible 10 min ago, never started
	podD := ended(d, 2*time.Minute) // its pod ended 2 min ago
	podE := builders.Pod("e-a-1").OfGroup("e").Phase(corev1.PodRunning).Obj()
	builders.WrapGroup(e).RunningIn("a", podE.Name, builders.At(0))
	groups := []*v1alpha1.OaatGroup{a, b, c, d, e}
	pods := []*corev1.Pod{podB, podD, podE}

	var objs []client.Object
	for _, g := range groups {
		objs = append(objs, g)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	r := newTestReconciler(newFakeClient(t, interceptor.Funcs{}, objs...), nil)
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	ctx := context.Background()
	groupEvents := prioritized{r: r.OaatGroupReconciler, toGroups: self, floor: duepriority.Idle}
	podEvents := prioritized{r: r.OaatGroupReconciler, toGroups: podToGroup, floor: duepriority.Idle}
	for _, g := range groups {
		groupEvents.Create(ctx, event.CreateEvent{Object: g, IsInInitialList: true}, q)
	}
	for _, p := range pods {
		podEvents.Create(ctx, event.CreateEvent{Object: p, IsInInitialList: true}, q)
	}

	var order []string
	var priorities []int
	for range groups {
		req, priority, _ := q.GetWithPriority()
		order, priorities = append(order, req.Name), append(priorities, priority)
		q.Done(req)
	}
	want := []string{"c", "d", "b", "a", "e"} // due 10 min, 2 min, 5 s; then the idle, in list order
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("handed out %v (priorities %v), want %v", order, priorities, want)
		}
	}
	if priorities[3] != duepriority.Idle || priorities[4] != duepriority.Idle {
		t.Fatalf("the groups with nothing due have priorities %v, want %d", priorities[3:], duepriority.Idle)
	}
}

// TestPrioritizedEcho: the echo of a run's start (the group's status naming a pod that runs) is
// idle, and cannot lower a group queued as due; a rogue pod and an OaatRun make the group due now.
func TestPrioritizedEcho(t *testing.T) {
	pod := builders.Pod("g-a-1").OfGroup("g").Phase(corev1.PodRunning).Obj()
	g := builders.Group("a").Named("g").Generation(1).RunningIn("a", pod.Name, builders.At(0)).Obj()
	r := newTestReconciler(newFakeClient(t, interceptor.Funcs{}, g, pod), nil)
	q := priorityqueue.New[reconcile.Request]("test-echo")
	defer q.ShutDown()
	ctx := context.Background()
	podEvents := prioritized{r: r.OaatGroupReconciler, toGroups: podToGroup, floor: duepriority.Idle}
	podEvents.Update(ctx, event.UpdateEvent{ObjectOld: pod, ObjectNew: pod}, q)
	if _, priority, _ := q.GetWithPriority(); priority != duepriority.Idle {
		t.Fatalf("the echo of a running pod has priority %d, want %d", priority, duepriority.Idle)
	}
	q.Done(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(g)})

	ended := pod.DeepCopy()
	ended.Status.Phase = corev1.PodFailed
	podEvents.Update(ctx, event.UpdateEvent{ObjectOld: pod, ObjectNew: ended}, q)
	podEvents.Update(ctx, event.UpdateEvent{ObjectOld: pod, ObjectNew: pod}, q)
	if _, priority, _ := q.GetWithPriority(); priority != duepriority.Due(0) {
		t.Fatalf("the end of the run's pod has priority %d, want %d (due now)", priority, duepriority.Due(0))
	}

	rogue := builders.Pod("g-a-0").OfGroup("g").Phase(corev1.PodRunning).Obj()
	q.Done(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(g)})
	podEvents.Create(ctx, event.CreateEvent{Object: rogue}, q)
	if _, priority, _ := q.GetWithPriority(); priority != duepriority.Due(0) {
		t.Fatalf("a live pod that is not the current run has priority %d, want %d (due now)", priority, duepriority.Due(0))
	}

	runs := prioritized{r: r.OaatGroupReconciler, toGroups: onDemandRunToGroup, floor: duepriority.Unknown, dueOnCreate: true}
	run := &v1alpha1.OaatRun{ObjectMeta: metav1.ObjectMeta{Name: "now", Namespace: testNamespace}, Spec: v1alpha1.OaatRunSpec{OaatGroup: "g", Item: "a"}}
	q.Done(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(g)})
	runs.Create(ctx, event.CreateEvent{Object: run}, q)
	if _, priority, _ := q.GetWithPriority(); priority != duepriority.Due(0) {
		t.Fatalf("an OaatRun's creation has priority %d, want %d (due now)", priority, duepriority.Due(0))
	}
}

// TestPrioritizedRunWithoutPod: a group whose current run's pod the cache does not hold. Once the
// cache synced (the reprioritizer) the pod was never created (the operator stopped between the
// intent and the create), no event of it will come, and the group is due since its previous run
// ended, not since the intent: counting from the intent ranked it behind groups due for less. In
// the informers' initial list the pod may not be listed yet: Unknown, until its own event or the
// reprioritizer. Any other event sees a pod on its way into the cache: due since its intent.
func TestPrioritizedRunWithoutPod(t *testing.T) {
	intent, previousEnd := builders.T0.Add(-time.Minute), metav1.NewTime(builders.T0.Add(-2*time.Minute))
	for _, tc := range []struct {
		name   string
		synced bool
		event  func(prioritized, *v1alpha1.OaatGroup, queue)
		want   int
	}{
		{"the synced cache lacks it: never created", true, func(h prioritized, g *v1alpha1.OaatGroup, q queue) {
			h.Generic(context.Background(), event.GenericEvent{Object: g}, q)
		}, duepriority.Due(2 * time.Minute)},
		{"the initial list, its pod perhaps not listed yet", false, func(h prioritized, g *v1alpha1.OaatGroup, q queue) {
			h.Create(context.Background(), event.CreateEvent{Object: g, IsInInitialList: true}, q)
		}, duepriority.Unknown},
		{"an update: its pod on its way into the cache", false, func(h prioritized, g *v1alpha1.OaatGroup, q queue) {
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: g, ObjectNew: g}, q)
		}, duepriority.Due(time.Minute)},
	} {
		g := builders.Group("a", "b").Named("g").Obj()
		g.Status.ObservedGeneration = g.Generation
		g.Status.Items = []v1alpha1.ItemStatus{{Name: "a", LastSuccess: &previousEnd}, {Name: "b"}}
		g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "b", PodName: "g-b-2", StartedAt: metav1.NewTime(intent)}
		r := newTestReconciler(newFakeClient(t, interceptor.Funcs{}, g), nil)
		q := priorityqueue.New[reconcile.Request]("test-no-pod")
		tc.event(prioritized{r: r.OaatGroupReconciler, toGroups: self, floor: duepriority.Idle, synced: tc.synced}, g, q)
		if _, priority, _ := q.GetWithPriority(); priority != tc.want {
			t.Errorf("%s: priority %d, want %d", tc.name, priority, tc.want)
		}
		q.ShutDown()
	}
	if duepriority.Due(2*time.Minute) <= duepriority.Due(time.Minute) || duepriority.Due(time.Minute) <= duepriority.Unknown {
		t.Fatalf("the levels do not rank due for 2 min (%d) before 1 min (%d) before unknown (%d)",
			duepriority.Due(2*time.Minute), duepriority.Due(time.Minute), duepriority.Unknown)
	}
}
