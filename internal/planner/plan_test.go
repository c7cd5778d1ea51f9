package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestDecideStartsFirstRun(t *testing.T) {
	g := newGroup("a", "b")
	// No Ready event on first sight, no event for a start.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, 0), runningCond(g, "a", 1, 0)},
			CurrentRun:         currentRun(g, "a", 1, 0),
			RunCount:           1,
			ItemCount:          2,
			Items:              []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(0), WaitReason: v1alpha1.WaitRunning}, {Name: "b"}},
		},
		Create: newPod(t, g, "a", 1),
	}, Decide(input(g, 0)))
}

func TestDecideIsIdempotentWhileRunning(t *testing.T) {
	g := newGroup("a", "b")
	first := Decide(input(g, 0))
	g = applied(g, first)
	pod := *first.Create
	pod.UID = "uid"
	pod.Status.Phase = corev1.PodRunning

	// While the run goes on the plan neither acts nor changes the status.
	for _, now := range []time.Duration{time.Second, time.Hour} {
		checkPlan(t, Plan{Status: g.Status}, Decide(input(g, now, pod)))
	}
}

func TestDecideRecordsSuccessAndStartsNext(t *testing.T) {
	g := newGroup("a", "b")
	running(t, g, "a", 1, at(0))
	pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(30*time.Second))

	// The only finished pod of item a is kept.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, time.Minute), runningCond(g, "b", 2, time.Minute)},
			CurrentRun:         currentRun(g, "b", 2, time.Minute),
			RunCount:           2,
			ItemCount:          2,
			Items: []v1alpha1.ItemStatus{
				{Name: "a", LastStarted: at(0), LastSuccess: at(30 * time.Second), LastExitCode: ptr.To[int32](0),
					LastReason: "Completed", LastResult: v1alpha1.ResultSucceeded, LastPodName: pod.Name, RecentRunSeconds: []int64{30},
					NextEligibleAt: at(30*time.Second + time.Hour), WaitReason: v1alpha1.WaitSucceededRecently},
				{Name: "b", LastStarted: at(time.Minute), WaitReason: v1alpha1.WaitRunning},
			},
		},
		Events: []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunSucceeded,
			Message: `Item "a" succeeded in pod ` + pod.Name + ": Completed, exit code 0"}},
		Create:   newPod(t, g, "b", 2),
		Finished: []Outcome{{Item: "a", Result: v1alpha1.ResultSucceeded, Duration: 30 * time.Second}},
		Untrack:  []*corev1.Pod{&pod},
	}, Decide(input(g, time.Minute, pod)))
}

func TestDecideRecordsFailureAndCoolsOff(t *testing.T) {
	g := newGroup("a")
	itemStatus(g, "a").FailureCount = 2
	running(t, g, "a", 4, at(0))
	pod := finished(runPod(t, g, "a", 4, corev1.PodFailed), 3, "Error", at(20*time.Second))

	failed := v1alpha1.ItemStatus{Name: "a", LastStarted: at(0), LastFailure: at(20 * time.Second), FailureCount: 3,
		LastExitCode: ptr.To[int32](3), LastReason: "Error", LastResult: v1alpha1.ResultFailed, LastPodName: pod.Name, RecentRunSeconds: []int64{20},
		NextEligibleAt: at(20*time.Second + 10*time.Minute), WaitReason: v1alpha1.WaitCoolingOff}
	// The cool-off is 10m from the end of the run at +20s: no restart inside it.
	p := Decide(input(g, 21*time.Second, pod))
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, 21*time.Second), idleCond(21 * time.Second)},
			RunCount:           4, ItemCount: 1, Items: []v1alpha1.ItemStatus{failed},
		},
		Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed,
			Message: `Item "a" failed in pod ` + pod.Name + ": Error, exit code 3"}},
		Finished:     []Outcome{{Item: "a", Result: v1alpha1.ResultFailed, Duration: 20 * time.Second}},
		RequeueAfter: 10*time.Minute - time.Second,
		Untrack:      []*corev1.Pod{&pod},
	}, p)

	// At the end of the cool-off the item runs again.
	later := applied(g, p)
	retry := Decide(input(later, 20*time.Second+10*time.Minute, pod))
	retried := failed
	retried.LastStarted, retried.NextEligibleAt, retried.WaitReason = at(20*time.Second+10*time.Minute), nil, v1alpha1.WaitRunning
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, 21*time.Second), runningCond(g, "a", 5, 20*time.Second+10*time.Minute)},
			CurrentRun:         currentRun(g, "a", 5, 20*time.Second+10*time.Minute),
			RunCount:           5, ItemCount: 1, Items: []v1alpha1.ItemStatus{retried},
		},
		Create:  newPod(t, g, "a", 5),
		Untrack: []*corev1.Pod{&pod},
	}, retry)

	// A success resets the failure count, and the superseded failed pod goes.
	later = applied(later, retry)
	done := finished(runPod(t, later, "a", 5, corev1.PodSucceeded), 0, "Completed", at(11*time.Minute))
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, 21*time.Second), idleCond(11 * time.Minute)},
			RunCount:           5, ItemCount: 1, Items: []v1alpha1.ItemStatus{{
				Name: "a", LastStarted: at(20*time.Second + 10*time.Minute), LastSuccess: at(11 * time.Minute),
				LastFailure: at(20 * time.Second), LastExitCode: ptr.To[int32](0), LastReason: "Completed", LastResult: v1alpha1.ResultSucceeded, LastPodName: done.Name,
				RecentRunSeconds: []int64{20, 40}, NextEligibleAt: at(11*time.Minute + time.Hour), WaitReason: v1alpha1.WaitSucceededRecently,
			}},
		},
		Events: []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunSucceeded,
			Message: `Item "a" succeeded in pod ` + done.Name + ": Completed, exit code 0"}},
		DeleteBatch:  []*corev1.Pod{&pod},
		Finished:     []Outcome{{Item: "a", Result: v1alpha1.ResultSucceeded, Duration: 40 * time.Second}},
		RequeueAfter: time.Hour,
		Untrack:      []*corev1.Pod{&done, &pod},
	}, Decide(input(later, 11*time.Minute, pod, done)))
}

// failedRun is the status entry of item a after its first run, started at 0, failed at end: its
// run time is recorded, failed or not.
func failedRun(pod string, end time.Duration, code *int32, reason string) v1alpha1.ItemStatus {
	return v1alpha1.ItemStatus{Name: "a", LastStarted: at(0), LastFailure: at(end), FailureCount: 1,
		LastExitCode: code, LastReason: reason, LastResult: v1alpha1.ResultFailed, LastPodName: pod, RecentRunSeconds: []int64{int64(end / time.Second)},
		NextEligibleAt: at(end + 10*time.Minute), WaitReason: v1alpha1.WaitCoolingOff}
}

func TestDecideFailedPodExplainsWithFailingContainer(t *testing.T) {
	g := newGroup("a")
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodFailed)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "sidecar", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: *at(5 * time.Second)}}},
		{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: *at(9 * time.Second)}}},
	}
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, 10*time.Second), idleCond(10 * time.Second)},
			RunCount:           1, ItemCount: 1, Items: []v1alpha1.ItemStatus{failedRun(pod.Name, 9*time.Second, ptr.To[int32](137), "OOMKilled")},
		},
		Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed,
			Message: `Item "a" failed in pod ` + pod.Name + ": OOMKilled, exit code 137"}},
		Finished:     []Outcome{{Item: "a", Result: v1alpha1.ResultFailed, Duration: 9 * time.Second}},
		RequeueAfter: 10*time.Minute - time.Second,
		Untrack:      []*corev1.Pod{&pod},
	}, Decide(input(g, 10*time.Second, pod)))
}

func TestDecideEvictedPodIsAFailure(t *testing.T) {
	g := newGroup("a")
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodFailed)
	pod.Status.Reason = "Evicted"
	pod.Status.Message = "The node was low on resource: memory."
	// No container says when it ended: it ended when the decision saw it.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, time.Minute), idleCond(time.Minute)},
			RunCount:           1, ItemCount: 1, Items: []v1alpha1.ItemStatus{failedRun(pod.Name, time.Minute, nil, "Evicted")},
		},
		Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed,
			Message: `Item "a" failed in pod ` + pod.Name + ": Evicted, The node was low on resource: memory."}},
		Finished:     []Outcome{{Item: "a", Result: v1alpha1.ResultFailed, Duration: time.Minute}},
		RequeueAfter: 10 * time.Minute,
		Untrack:      []*corev1.Pod{&pod},
	}, Decide(input(g, time.Minute, pod)))
}

func TestDecideMissingPodIsOneFailure(t *testing.T) {
	g := newGroup("a", "b")
	itemStatus(g, "b").LastSuccess = at(0)
	running(t, g, "a", 1, at(0))

	p := Decide(input(g, time.Minute))
	a := failedRun(podName(g, "a", 1), time.Minute, nil, string(v1alpha1.ReasonPodNotFound))
	a.RecentRunSeconds = nil // a pod that is gone says nothing of its run time
	b := v1alpha1.ItemStatus{Name: "b", LastSuccess: at(0), NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitSucceededRecently}
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, time.Minute), idleCond(time.Minute)},
			RunCount:           1, ItemCount: 2, Items: []v1alpha1.ItemStatus{a, b},
		},
		Events: []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed,
			Message: `Item "a" failed in pod ` + podName(g, "a", 1) + ": PodNotFound, its pod no longer exists: deleted before it ended, or never created"}},
		Finished:     []Outcome{{Item: "a", Result: v1alpha1.ResultFailed, Duration: time.Minute}},
		RequeueAfter: 10 * time.Minute,
	}, p)
	// Recorded once: the next decision has no current run to record.
	next := applied(g, p)
	checkPlan(t, Plan{Status: next.Status, RequeueAfter: 9 * time.Minute}, Decide(input(next, 2*time.Minute)))
}

func TestDecideWaitsForDeletingPod(t *testing.T) {
	g := newGroup("a", "b")
	running(t, g, "a", 1, at(0))
	pod := runPod(t, g, "a", 1, corev1.PodRunning)
	pod.DeletionTimestamp = at(time.Second)

	// Nothing is recorded and nothing starts before the deleted pod ended.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, 2*time.Second), runningCond(g, "a", 1, 2*time.Second)},
			CurrentRun:         currentRun(g, "a", 1, 0),
			RunCount:           1, ItemCount: 2,
			Items: []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(0), WaitReason: v1alpha1.WaitRunning}, {Name: "b"}},
		},
	}, Decide(input(g, 2*time.Second, pod)))
}

// roguePodDeleted is the deletion of a rogue pod and its event.
func roguePodDeleted(pod *corev1.Pod) Deletion {
	return Deletion{Pod: pod, Event: &Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRoguePodDeleted,
		Message: "Deleted pod " + pod.Name + ": it carries the group's label but is not its current run"}}
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

	// The current run goes on; the pod already being deleted is not deleted again.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, time.Second), runningCond(g, "a", 2, time.Second)},
			CurrentRun:         currentRun(g, "a", 2, 0),
			RunCount:           2, ItemCount: 2,
			Items: []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(0), WaitReason: v1alpha1.WaitRunning}, {Name: "b"}},
		},
		Delete:  []Deletion{roguePodDeleted(&rogue), roguePodDeleted(&foreign)},
		Untrack: []*corev1.Pod{&rogue, &goingAway},
	}, Decide(input(g, time.Second, current, rogue, foreign, goingAway)))
}

func TestDecideStartsNothingWhileAnotherPodLives(t *testing.T) {
	g := newGroup("a")
	rogue := runPod(t, g, "a", 7, corev1.PodRunning)
	rogue.DeletionTimestamp = at(0)
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, time.Second), idleCond(time.Second)},
			ItemCount:          1, Items: []v1alpha1.ItemStatus{{Name: "a"}},
		},
		Untrack: []*corev1.Pod{&rogue},
	}, Decide(input(g, time.Second, rogue)))
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

	waiting := func(item string) v1alpha1.ItemStatus {
		return v1alpha1.ItemStatus{Name: item, LastSuccess: at(0), NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitSucceededRecently}
	}
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, time.Minute), idleCond(time.Minute)},
			RunCount:           5, ItemCount: 2, Items: []v1alpha1.ItemStatus{waiting("a"), waiting("b")},
		},
		DeleteBatch:  []*corev1.Pod{&old3, &old1},
		RequeueAfter: 59 * time.Minute,
		Untrack:      []*corev1.Pod{&old3, &latest, &onlyB, &old1},
	}, Decide(input(g, time.Minute, old3, latest, onlyB, old1)))
}

func TestDecideWaitsForNextEligibleItem(t *testing.T) {
	g := newGroup("a", "b")
	itemStatus(g, "a").LastSuccess = at(0)
	itemStatus(g, "b").LastSuccess = at(-50 * time.Minute)
	// No item starts within its frequency; the group wakes when b's ends.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, time.Minute), idleCond(time.Minute)},
			ItemCount:          2, Items: []v1alpha1.ItemStatus{
				{Name: "a", LastSuccess: at(0), NextEligibleAt: at(time.Hour), WaitReason: v1alpha1.WaitSucceededRecently},
				{Name: "b", LastSuccess: at(-50 * time.Minute), NextEligibleAt: at(10 * time.Minute), WaitReason: v1alpha1.WaitSucceededRecently},
			},
		},
		RequeueAfter: 9 * time.Minute,
	}, Decide(input(g, time.Minute)))
}

func TestDecideDropsRemovedItems(t *testing.T) {
	g := newGroup("a", "gone-running")
	itemStatus(g, "stale").LastSuccess = at(0)
	running(t, g, "gone-running", 1, at(0))
	g.Spec.OaatItems = []string{"a"}
	pod := runPod(t, g, "gone-running", 1, corev1.PodRunning)

	// Item a, and the removed item while it runs; the stale one goes.
	p := Decide(input(g, time.Second, pod))
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, time.Second), runningCond(g, "gone-running", 1, time.Second)},
			CurrentRun:         currentRun(g, "gone-running", 1, 0),
			RunCount:           1, ItemCount: 1, Items: []v1alpha1.ItemStatus{
				{Name: "a"},
				{Name: "gone-running", LastStarted: at(0), WaitReason: v1alpha1.WaitRunning},
			},
		},
	}, p)

	// Its run is recorded and its pod deleted, alone, with the status entry that goes with it;
	// item a starts.
	pod = finished(pod, 0, "Completed", at(time.Second))
	pod.Status.Phase = corev1.PodSucceeded
	g = applied(g, p)
	p = Decide(input(g, 2*time.Second, pod))
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, time.Second), runningCond(g, "a", 2, time.Second)},
			CurrentRun:         currentRun(g, "a", 2, 2*time.Second),
			RunCount:           2, ItemCount: 1, Items: []v1alpha1.ItemStatus{
				{Name: "a", LastStarted: at(2 * time.Second), WaitReason: v1alpha1.WaitRunning},
				{Name: "gone-running", LastStarted: at(0), LastSuccess: at(time.Second), LastExitCode: ptr.To[int32](0),
					LastReason: "Completed", LastResult: v1alpha1.ResultSucceeded, LastPodName: pod.Name, RecentRunSeconds: []int64{1}, WaitReason: v1alpha1.WaitRemoved},
			},
		},
		Events: []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunSucceeded,
			Message: `Item "gone-running" succeeded in pod ` + pod.Name + ": Completed, exit code 0"}},
		Create:   newPod(t, g, "a", 2),
		Delete:   []Deletion{{Pod: &pod}},
		Finished: []Outcome{{Item: "gone-running", Result: v1alpha1.ResultSucceeded, Duration: time.Second}},
		Untrack:  []*corev1.Pod{&pod},
	}, p)

	// Once its pod is gone the removed item's entry goes.
	g = applied(g, p)
	runA := *p.Create
	runA.Status.Phase = corev1.PodRunning
	want := g.Status.DeepCopy()
	want.Items = want.Items[:1]
	checkPlan(t, Plan{Status: *want}, Decide(input(g, 3*time.Second, runA)))
}

func TestDecideIsReproducible(t *testing.T) {
	g := newGroup("a", "b", "c", "d", "e")
	first := Decide(input(g, 0))
	// Same snapshot, time and seed: the same plan.
	for range 20 {
		checkPlan(t, first, Decide(input(g, 0)))
	}
}

func TestDecideNumbersRunsPastOrphanedPods(t *testing.T) {
	// A group deleted with its pods orphaned, then created again under the same name: its old,
	// finished pods keep their names and labels but have no owner. The next run is past them,
	// and a pod the group does not own is not deleted.
	g := newGroup("a")
	orphan := finished(runPod(t, g, "a", 3, corev1.PodSucceeded), 0, "Completed", at(0))
	orphan.OwnerReferences = nil

	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, time.Minute), runningCond(g, "a", 4, time.Minute)},
			CurrentRun:         currentRun(g, "a", 4, time.Minute),
			RunCount:           4, ItemCount: 1,
			Items: []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(time.Minute), WaitReason: v1alpha1.WaitRunning}},
		},
		Create:  newPod(t, g, "a", 4),
		Untrack: []*corev1.Pod{&orphan},
	}, Decide(input(g, time.Minute, orphan)))
}
