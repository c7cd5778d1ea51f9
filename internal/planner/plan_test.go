package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

func TestDecideStartsFirstRun(t *testing.T) {
	g := newGroup("a", "b")
	p := Decide(input(g, 0))

	if p.Create == nil {
		t.Fatal("no pod planned for a new group")
	}
	cr := p.Status.CurrentRun
	if cr == nil || cr.PodName != p.Create.Name || cr.PodName != podbuild.Name("backups", cr.Item, 1) {
		t.Fatalf("currentRun %+v does not name the planned pod %s", cr, p.Create.Name)
	}
	if p.Status.RunCount != 1 || p.Create.Labels[v1alpha1.LabelRun] != "1" {
		t.Fatalf("runCount %d, run label %q; want 1", p.Status.RunCount, p.Create.Labels[v1alpha1.LabelRun])
	}
	if got := planItem(t, p, cr.Item).LastStarted; got == nil || !got.Equal(at(0)) {
		t.Fatalf("lastStarted = %v, want %v", got, t0)
	}
	if c := condition(t, p, v1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
	if c := condition(t, p, v1alpha1.ConditionRunning); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonItemRunning {
		t.Fatalf("Running = %+v", c)
	}
	if len(reasons(p)) != 0 {
		t.Fatalf("events %v, want none (no Ready event on first sight, no event for a start)", reasons(p))
	}
	if p.Status.ItemCount != 2 || len(p.Status.Items) != 2 || p.Status.ObservedGeneration != 1 {
		t.Fatalf("itemCount %d, items %+v, observedGeneration %d", p.Status.ItemCount, p.Status.Items, p.Status.ObservedGeneration)
	}
}

func TestDecideIsIdempotentWhileRunning(t *testing.T) {
	g := newGroup("a", "b")
	first := Decide(input(g, 0))
	g = applied(g, first)
	pod := *first.Create
	pod.UID = "uid"
	pod.Status.Phase = corev1.PodRunning

	for _, now := range []time.Duration{time.Second, time.Hour} {
		p := Decide(input(g, now, pod))
		if p.Create != nil || len(p.Delete) > 0 || len(p.Events) > 0 || p.RequeueAfter != 0 {
			t.Fatalf("at +%v: plan acts while the run goes on: %+v", now, p)
		}
		if !equality.Semantic.DeepEqual(p.Status, g.Status) {
			t.Fatalf("at +%v: status changes while the run goes on:\n%+v\n%+v", now, p.Status, g.Status)
		}
	}
}

func TestDecideRecordsSuccessAndStartsNext(t *testing.T) {
	g := newGroup("a", "b")
	running(t, g, "a", 1, at(0))
	pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(30*time.Second))

	p := Decide(input(g, time.Minute, pod))

	a := planItem(t, p, "a")
	if a.LastSuccess == nil || !a.LastSuccess.Equal(at(30*time.Second)) || a.FailureCount != 0 ||
		a.LastExitCode == nil || *a.LastExitCode != 0 || a.LastReason != "Completed" || a.LastPodName != pod.Name {
		t.Fatalf("item a = %+v", a)
	}
	if len(p.Finished) != 1 || p.Finished[0].Result != ResultSucceeded || p.Finished[0].Duration != 30*time.Second {
		t.Fatalf("finished = %+v", p.Finished)
	}
	if p.Create == nil || p.Status.CurrentRun == nil || p.Status.CurrentRun.Item != "b" || p.Status.RunCount != 2 {
		t.Fatalf("next run: create %v, currentRun %+v, runCount %d; want item b, run 2", p.Create != nil, p.Status.CurrentRun, p.Status.RunCount)
	}
	if !slices.Equal(reasons(p), []string{v1alpha1.ReasonRunSucceeded}) {
		t.Fatalf("events = %v", reasons(p))
	}
	if len(p.Delete) != 0 {
		t.Fatalf("deletes the only finished pod of item a: %v", deleted(p))
	}
}

func TestDecideRecordsFailureAndCoolsOff(t *testing.T) {
	g := newGroup("a")
	itemStatus(g, "a").FailureCount = 2
	running(t, g, "a", 4, at(0))
	pod := finished(runPod(t, g, "a", 4, corev1.PodFailed), 3, "Error", at(20*time.Second))

	p := Decide(input(g, 21*time.Second, pod))

	a := planItem(t, p, "a")
	if a.LastFailure == nil || !a.LastFailure.Equal(at(20*time.Second)) || a.FailureCount != 3 ||
		*a.LastExitCode != 3 || a.LastReason != "Error" || a.LastSuccess != nil {
		t.Fatalf("item a = %+v", a)
	}
	if len(p.Finished) != 1 || p.Finished[0].Result != ResultFailed {
		t.Fatalf("finished = %+v", p.Finished)
	}
	if p.Create != nil {
		t.Fatal("restarted a failed item inside its cool-off")
	}
	// cool-off is 10m from the end of the run at +20s.
	if want := 10*time.Minute - time.Second; p.RequeueAfter != want {
		t.Fatalf("requeueAfter = %v, want %v", p.RequeueAfter, want)
	}
	if c := condition(t, p, v1alpha1.ConditionRunning); c.Status != metav1.ConditionFalse {
		t.Fatalf("Running = %+v", c)
	}

	// At the end of the cool-off the item runs again; a success resets the failure count.
	later := applied(g, p)
	retry := Decide(input(later, 20*time.Second+10*time.Minute, pod))
	if retry.Create == nil || retry.Status.CurrentRun.Item != "a" || retry.Status.RunCount != 5 {
		t.Fatalf("no retry after the cool-off: %+v", retry.Status.CurrentRun)
	}
	later = applied(later, retry)
	done := finished(runPod(t, later, "a", 5, corev1.PodSucceeded), 0, "Completed", at(11*time.Minute))
	p = Decide(input(later, 11*time.Minute, pod, done))
	if a := planItem(t, p, "a"); a.FailureCount != 0 || a.LastSuccess == nil {
		t.Fatalf("after success item a = %+v", a)
	}
	if !slices.Equal(deleted(p), []string{pod.Name + " rogue=false"}) {
		t.Fatalf("deleted %v, want the superseded failed pod only", deleted(p))
	}
}

func TestDecideFailedPodExplainsWithFailingContainer(t *testing.T) {
	g := newGroup("a")
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodFailed)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "sidecar", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: *at(5 * time.Second)}}},
		{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: *at(9 * time.Second)}}},
	}
	p := Decide(input(g, 10*time.Second, pod))
	a := planItem(t, p, "a")
	if *a.LastExitCode != 137 || a.LastReason != "OOMKilled" || !a.LastFailure.Equal(at(9*time.Second)) {
		t.Fatalf("item a = %+v", a)
	}
}

func TestDecideEvictedPodIsAFailure(t *testing.T) {
	g := newGroup("a")
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodFailed)
	pod.Status.Reason = "Evicted"
	pod.Status.Message = "The node was low on resource: memory."
	p := Decide(input(g, time.Minute, pod))
	a := planItem(t, p, "a")
	if a.FailureCount != 1 || a.LastReason != "Evicted" || a.LastExitCode != nil || !a.LastFailure.Equal(at(time.Minute)) {
		t.Fatalf("item a = %+v", a)
	}
}

func TestDecideMissingPodIsOneFailure(t *testing.T) {
	g := newGroup("a", "b")
	itemStatus(g, "b").LastSuccess = at(0)
	running(t, g, "a", 1, at(0))

	p := Decide(input(g, time.Minute))
	a := planItem(t, p, "a")
	if a.FailureCount != 1 || a.LastReason != v1alpha1.ReasonPodNotFound || p.Status.CurrentRun != nil {
		t.Fatalf("item a = %+v, currentRun %+v", a, p.Status.CurrentRun)
	}
	// Recorded once: the next decision has no current run to record.
	again := Decide(input(applied(g, p), 2*time.Minute))
	if len(again.Finished) != 0 || planItem(t, again, "a").FailureCount != 1 {
		t.Fatalf("recorded twice: %+v", again.Finished)
	}
}

func TestDecideWaitsForDeletingPod(t *testing.T) {
	g := newGroup("a", "b")
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodRunning)
	pod.DeletionTimestamp = at(time.Second)

	p := Decide(input(g, 2*time.Second, pod))
	if len(p.Finished) != 0 || p.Create != nil || p.Status.CurrentRun == nil {
		t.Fatalf("acted before the deleted pod ended: finished %+v, create %v", p.Finished, p.Create != nil)
	}
}

func TestDecideDeletesRoguePods(t *testing.T) {
	g := newGroup("a", "b")
	running(t, g, "a", 2, at(0))
	current := runPod(t, g, "a", 2, corev1.PodRunning)
	rogue := runPod(t, g, "b", 1, corev1.PodRunning)
	foreign := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "copied", Namespace: "ns",
		Labels: map[string]string{v1alpha1.LabelGroup: "backups"}}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	goingAway := runPod(t, g, "b", 3, corev1.PodRunning)
	goingAway.DeletionTimestamp = at(0)

	p := Decide(input(g, time.Second, current, rogue, foreign, goingAway))
	want := []string{rogue.Name + " rogue=true", "copied rogue=true"}
	if !slices.Equal(deleted(p), want) {
		t.Fatalf("deleted %v, want %v", deleted(p), want)
	}
	if p.Status.CurrentRun == nil || p.Status.CurrentRun.PodName != current.Name {
		t.Fatalf("current run changed: %+v", p.Status.CurrentRun)
	}
}

func TestDecideStartsNothingWhileAnotherPodLives(t *testing.T) {
	g := newGroup("a")
	rogue := runPod(t, g, "a", 7, corev1.PodRunning)
	rogue.DeletionTimestamp = at(0)
	p := Decide(input(g, time.Second, rogue))
	if p.Create != nil {
		t.Fatal("planned a pod while another pod of the group still runs")
	}
}

func TestDecideKeepsLatestFinishedPodPerItem(t *testing.T) {
	g := newGroup("a", "b")
	g.Status.RunCount = 5
	old1 := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(0))
	old3 := finished(runPod(t, g, "a", 3, corev1.PodFailed), 1, "Error", at(0))
	latest := finished(runPod(t, g, "a", 5, corev1.PodSucceeded), 0, "Completed", at(0))
	onlyB := finished(runPod(t, g, "b", 4, corev1.PodSucceeded), 0, "Completed", at(0))
	itemStatus(g, "a").LastSuccess = at(0)
	itemStatus(g, "b").LastSuccess = at(0)

	p := Decide(input(g, time.Minute, old3, latest, onlyB, old1))
	want := []string{old3.Name + " rogue=false", old1.Name + " rogue=false"}
	if !slices.Equal(deleted(p), want) {
		t.Fatalf("deleted %v, want %v", deleted(p), want)
	}
}

func TestDecideWaitsForNextEligibleItem(t *testing.T) {
	g := newGroup("a", "b")
	itemStatus(g, "a").LastSuccess = at(0)
	itemStatus(g, "b").LastSuccess = at(-50 * time.Minute)
	p := Decide(input(g, time.Minute))
	if p.Create != nil {
		t.Fatal("started an item that succeeded within its frequency")
	}
	if want := 9 * time.Minute; p.RequeueAfter != want {
		t.Fatalf("requeueAfter = %v, want %v (when b's frequency ends)", p.RequeueAfter, want)
	}
}

func TestDecideDropsRemovedItems(t *testing.T) {
	g := newGroup("a", "gone-running")
	itemStatus(g, "stale").LastSuccess = at(0)
	running(t, g, "gone-running", 1, at(0))
	g.Spec.OaatItems = []string{"a"}
	pod := runPod(t, g, "gone-running", 1, corev1.PodRunning)

	p := Decide(input(g, time.Second, pod))
	names := []string{}
	for _, it := range p.Status.Items {
		names = append(names, it.Name)
	}
	if !slices.Equal(names, []string{"a", "gone-running"}) {
		t.Fatalf("items %v: want a, and the removed item while it runs", names)
	}
	pod = finished(pod, 0, "Completed", at(time.Second))
	pod.Status.Phase = corev1.PodSucceeded
	p = Decide(input(applied(g, p), 2*time.Second, pod))
	if len(p.Finished) != 1 || !slices.Equal(deleted(p), []string{pod.Name + " rogue=false"}) {
		t.Fatalf("the removed item's run is not recorded and its pod deleted: finished %+v, deleted %v", p.Finished, deleted(p))
	}
	if gone := planItem(t, p, "gone-running"); gone.LastSuccess == nil || gone.WaitReason != v1alpha1.WaitRemoved {
		t.Fatalf("while its pod remains the removed item = %+v", gone)
	}
	p = Decide(input(applied(g, p), 3*time.Second))
	if len(p.Status.Items) != 1 || p.Status.Items[0].Name != "a" {
		t.Fatalf("once its pod is gone the removed item stays: %+v", p.Status.Items)
	}
}

func TestDecideIsReproducible(t *testing.T) {
	g := newGroup("a", "b", "c", "d", "e")
	first := Decide(input(g, 0))
	for range 20 {
		if p := Decide(input(g, 0)); p.Create.Name != first.Create.Name {
			t.Fatalf("same snapshot, time and seed chose %s then %s", first.Create.Name, p.Create.Name)
		}
	}
}

func TestDecideNumbersRunsPastOrphanedPods(t *testing.T) {
	// A group deleted with its pods orphaned, then created again under the same name: its old,
	// finished pods keep their names and labels but have no owner.
	g := newGroup("a")
	orphan := finished(runPod(t, g, "a", 3, corev1.PodSucceeded), 0, "Completed", at(0))
	orphan.OwnerReferences = nil

	p := Decide(input(g, time.Minute, orphan))
	if p.Create == nil || p.Status.RunCount != 4 || p.Create.Name == orphan.Name {
		t.Fatalf("run %d in pod %v; want run 4, past the orphan %s", p.Status.RunCount, p.Create, orphan.Name)
	}
	if len(p.Delete) != 0 {
		t.Fatalf("deletes a pod the group does not own: %v", deleted(p))
	}
}
