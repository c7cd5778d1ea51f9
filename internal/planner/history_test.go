package planner

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// A group re-created with the same items, on its first pass, adopts the record: no item starts
// before it is due, the removed item is not resurrected, the runs go on from the record's count.
func TestDecideAdoptsTheHistoryOfTheDeletedGroup(t *testing.T) {
	g := newGroup("a", "b", "c")
	in := input(g, 0)
	in.History = deletedGroupRecord()
	p := Decide(in)

	if p.DeleteHistory != in.History {
		t.Fatalf("DeleteHistory = %v, want the adopted record", p.DeleteHistory)
	}
	if p.Create == nil || p.Status.CurrentRun.Item != "c" || p.Status.RunCount != 8 {
		t.Fatalf("started %+v with runCount %d, want item c (never run) as run 8", p.Status.CurrentRun, p.Status.RunCount)
	}
	got := map[string]v1alpha1.ItemStatus{}
	for _, it := range p.Status.Items {
		got[it.Name] = it
	}
	if _, ok := got["gone"]; ok || len(got) != 3 {
		t.Fatalf("items %v, want a, b and c only", slices.Sorted(maps.Keys(got)))
	}
	want := map[string]v1alpha1.ItemStatus{
		"a": {Name: "a", LastStarted: at(-31 * time.Minute), LastSuccess: at(-30 * time.Minute), LastExitCode: ptr.To[int32](0),
			LastReason: "Completed", NextEligibleAt: at(30 * time.Minute), WaitReason: v1alpha1.WaitSucceededRecently},
		"b": {Name: "b", LastStarted: at(-6 * time.Minute), LastFailure: at(-5 * time.Minute), FailureCount: 1, LastExitCode: ptr.To[int32](1),
			LastReason: "Error", NextEligibleAt: at(5 * time.Minute), WaitReason: v1alpha1.WaitCoolingOff},
	}
	for _, name := range []string{"a", "b"} {
		if diff := cmp.Diff(want[name], got[name]); diff != "" {
			t.Errorf("item %s (-want +got):\n%s", name, diff)
		}
	}
	if !slices.Contains(reasons(p), v1alpha1.ReasonHistoryAdopted) {
		t.Fatalf("no HistoryAdopted event: %v", reasons(p))
	}

	// The next pass (no record any more) and a pass that reads the record again (it could not be
	// deleted) change nothing of the history.
	next := applied(g, p)
	again := input(next, time.Second)
	again.History = deletedGroupRecord()
	if p2 := Decide(again); slices.Contains(reasons(p2), v1alpha1.ReasonHistoryAdopted) || !cmp.Equal(planItem(t, p2, "a").LastSuccess, at(-30*time.Minute)) {
		t.Fatalf("adopting again: events %v, item a %+v", reasons(p2), planItem(t, p2, "a"))
	}
}

// With every item's history adopted and none due, the re-created group starts nothing and wakes up
// when the first is due.
func TestDecideAdoptedHistoryStartsNothingEarly(t *testing.T) {
	in := input(newGroup("a", "b"), 0)
	in.History = deletedGroupRecord()
	p := Decide(in)
	if p.Create != nil || p.Status.CurrentRun != nil {
		t.Fatalf("started %+v", p.Status.CurrentRun)
	}
	if p.RequeueAfter != 5*time.Minute {
		t.Fatalf("RequeueAfter = %s, want 5m (b's cool-off)", p.RequeueAfter)
	}
}

func TestDecideDiscardsARecordItCannotAdopt(t *testing.T) {
	for _, c := range []struct {
		name  string
		group func() *v1alpha1.OaatGroup
		now   time.Duration
	}{
		{"expired", func() *v1alpha1.OaatGroup { return newGroup("a", "b") }, history.DefaultRetention},
		{"another OaatType", func() *v1alpha1.OaatGroup { g := newGroup("a", "b"); g.Spec.OaatType = "verifier"; return g }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := input(c.group(), c.now)
			in.History = deletedGroupRecord()
			p := Decide(in)
			if p.DeleteHistory != in.History || !slices.Contains(reasons(p), v1alpha1.ReasonHistoryDiscarded) {
				t.Fatalf("DeleteHistory %v, events %v; want the record deleted with HistoryDiscarded", p.DeleteHistory, reasons(p))
			}
			for _, it := range p.Status.Items {
				if it.LastSuccess != nil || it.LastFailure != nil || (it.LastStarted != nil && p.Status.CurrentRun.Item != it.Name) {
					t.Fatalf("item %s has adopted history: %+v", it.Name, it)
				}
			}
			if p.Status.RunCount != 1 {
				t.Fatalf("runCount %d, want 1: the group's own count", p.Status.RunCount)
			}
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
	if p.Create != nil {
		t.Fatalf("started %s", p.Status.CurrentRun.Item)
	}
	want := []v1alpha1.ItemStatus{{Name: "/srv/photos", LastStarted: at(-11 * time.Minute), LastSuccess: at(-10 * time.Minute),
		NextEligibleAt: at(50 * time.Minute), WaitReason: v1alpha1.WaitSucceededRecently}}
	if diff := cmp.Diff(want, p.Status.Items); diff != "" {
		t.Fatalf("items (-want +got):\n%s", diff)
	}
	if got := reasons(p); !slices.Equal(got, []string{v1alpha1.ReasonItemRenamed}) {
		t.Fatalf("events %v, want one ItemRenamed", got)
	}
	if again := Decide(input(applied(g, p), time.Second)); len(reasons(again)) != 0 || !cmp.Equal(again.Status.Items, p.Status.Items) {
		t.Fatalf("the rename applied again: events %v, items %+v", reasons(again), again.Status.Items)
	}
}
