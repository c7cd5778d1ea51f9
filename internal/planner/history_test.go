package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
)

// deletedGroupRecord is the record of the group "backups" deleted at t0-10m: item a succeeded
// 30 minutes before t0, item b failed 5 minutes before (cool-off 10m), item gone was removed since.
func deletedGroupRecord() *v1alpha1.OaatGroupHistory {
	return &v1alpha1.OaatGroupHistory{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "backups"},
		Spec: v1alpha1.OaatGroupHistorySpec{
			GroupUID: "old-uid", OaatType: "sleeper", RunCount: 7,
			DeletedAt: *at(-10 * time.Minute), ExpiresAt: *at(history.DefaultRetention),
			Items: []v1alpha1.ItemHistory{
				{Name: "a", LastStarted: at(-31 * time.Minute), LastSuccess: at(-30 * time.Minute), LastExitCode: ptr.To[int32](0), LastReason: "Completed"},
				{Name: "b", LastStarted: at(-6 * time.Minute), LastFailure: at(-5 * time.Minute), FailureCount: 1, LastExitCode: ptr.To[int32](1), LastReason: "Error"},
				{Name: "gone", LastStarted: at(-2 * time.Hour), LastSuccess: at(-2 * time.Hour)},
			},
		},
	}
}

// adoptedItems are the status entries of items a and b adopted from deletedGroupRecord, at t0.
func adoptedItems() []v1alpha1.ItemStatus {
	return []v1alpha1.ItemStatus{
		{Name: "a", LastStarted: at(-31 * time.Minute), LastSuccess: at(-30 * time.Minute), LastExitCode: ptr.To[int32](0),
			LastReason: "Completed", NextEligibleAt: at(30 * time.Minute), WaitReason: v1alpha1.WaitSucceededRecently},
		{Name: "b", LastStarted: at(-6 * time.Minute), LastFailure: at(-5 * time.Minute), FailureCount: 1, LastExitCode: ptr.To[int32](1),
			LastReason: "Error", NextEligibleAt: at(5 * time.Minute), WaitReason: v1alpha1.WaitCoolingOff},
	}
}

// adoptedEvent is the event of the adoption of items a and b from deletedGroupRecord.
func adoptedEvent() Event {
	return Event{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonHistoryAdopted,
		Message: "Adopted the history of 2 items from OaatGroupHistory backups, left by the group deleted at 2026-11-21T11:50:00Z: a, b"}
}

// A group re-created with the same items, on its first pass, adopts the record: no item starts
// before it is due, the removed item is not resurrected, the runs go on from the record's count.
func TestDecideAdoptsTheHistoryOfTheDeletedGroup(t *testing.T) {
	g := newGroup("a", "b", "c")
	in := input(g, 0)
	in.History = deletedGroupRecord()
	p := Decide(in)

	// Item c, never run, starts as run 8.
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(3, 0), runningCond(g, "c", 8, 0)},
			CurrentRun:         currentRun(g, "c", 8, 0), RunCount: 8, ItemCount: 3,
			Items: append(adoptedItems(), v1alpha1.ItemStatus{Name: "c", LastStarted: at(0), WaitReason: v1alpha1.WaitRunning}),
		},
		Events:        []Event{adoptedEvent()},
		Create:        newPod(t, g, "c", 8),
		DeleteHistory: deletedGroupRecord(),
	}, p)

	// A pass that reads the record again (it could not be deleted) changes nothing of the
	// history: it deletes the record again, and the run goes on.
	next := applied(g, p)
	again := input(next, time.Second, runPod(t, next, "c", 8, corev1.PodRunning))
	again.History = deletedGroupRecord()
	checkPlan(t, Plan{Status: next.Status, DeleteHistory: deletedGroupRecord()}, Decide(again))
}

// With every item's history adopted and none due, the re-created group starts nothing and wakes up
// when the first is due (b's cool-off).
func TestDecideAdoptedHistoryStartsNothingEarly(t *testing.T) {
	in := input(newGroup("a", "b"), 0)
	in.History = deletedGroupRecord()
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(2, 0), idleCond(0)},
			RunCount:           7, ItemCount: 2, Items: adoptedItems(),
		},
		Events:        []Event{adoptedEvent()},
		DeleteHistory: deletedGroupRecord(),
		RequeueAfter:  5 * time.Minute,
	}, Decide(in))
}

func TestDecideDiscardsARecordItCannotAdopt(t *testing.T) {
	for _, c := range []struct {
		name  string
		group func() *v1alpha1.OaatGroup
		now   time.Duration
		text  string
	}{
		{"expired", func() *v1alpha1.OaatGroup { return newGroup("a", "b") }, history.DefaultRetention,
			"Adopted nothing from OaatGroupHistory backups: it expired at " + at(history.DefaultRetention).UTC().Format(time.RFC3339)},
		{"another OaatType", func() *v1alpha1.OaatGroup { g := newGroup("a", "b"); g.Spec.OaatType = "verifier"; return g }, 0,
			"Adopted nothing from OaatGroupHistory backups: it is the history of OaatType sleeper, not verifier"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := c.group()
			in := input(g, c.now)
			in.History = deletedGroupRecord()
			// The record is deleted; the group starts afresh with its own count.
			ready := readyCond(2, c.now)
			ready.Message = "OaatType " + g.Spec.OaatType + " found, 2 items"
			checkPlan(t, Plan{
				Status: v1alpha1.OaatGroupStatus{
					ObservedGeneration: 1,
					Conditions:         []metav1.Condition{ready, runningCond(g, "a", 1, c.now)},
					CurrentRun:         currentRun(g, "a", 1, c.now), RunCount: 1, ItemCount: 2,
					Items: []v1alpha1.ItemStatus{{Name: "a", LastStarted: at(c.now), WaitReason: v1alpha1.WaitRunning}, {Name: "b"}},
				},
				Events:        []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonHistoryDiscarded, Message: c.text}},
				Create:        newPod(t, g, "a", 1),
				DeleteHistory: deletedGroupRecord(),
			}, Decide(in))
		})
	}
}

// An item renamed in spec.oaatItems with spec.itemRenames keeps its history: it does not run.
func TestDecideRenamedItemKeepsItsHistory(t *testing.T) {
	g := newGroup("/srv/photo")
	itemStatus(g, "/srv/photo").LastSuccess = at(-10 * time.Minute)
	itemStatus(g, "/srv/photo").LastStarted = at(-11 * time.Minute)
	g.Status.RunCount = 3
	g.Spec.OaatItems = []string{"/srv/photos"}
	g.Spec.ItemRenames = []v1alpha1.ItemRename{{From: "/srv/photo", To: "/srv/photos"}}

	p := Decide(input(g, 0))
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{readyCond(1, 0), idleCond(0)},
			RunCount:           3, ItemCount: 1,
			Items: []v1alpha1.ItemStatus{{Name: "/srv/photos", LastStarted: at(-11 * time.Minute), LastSuccess: at(-10 * time.Minute),
				NextEligibleAt: at(50 * time.Minute), WaitReason: v1alpha1.WaitSucceededRecently}},
		},
		Events: []Event{{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonItemRenamed,
			Message: "Item /srv/photos took the history of /srv/photo, which it was renamed from"}},
		RequeueAfter: 50 * time.Minute,
	}, p)
	// The rename is not applied again.
	next := applied(g, p)
	checkPlan(t, Plan{Status: next.Status, RequeueAfter: 50*time.Minute - time.Second}, Decide(input(next, time.Second)))
}
