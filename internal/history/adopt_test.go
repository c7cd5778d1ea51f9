package history

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestAdopt(t *testing.T) {
	a, b, photo := succeeded("/srv/a", -3*time.Hour), failed("/srv/b", -2*time.Hour), succeeded("/srv/photo", -time.Hour)
	full := record(a, b, photo)
	ownRun := succeeded("/srv/a", 10*time.Minute)

	cases := []struct {
		name   string
		group  *v1alpha1.OaatGroup
		items  []string // the group's resolved items; its spec's items when nil
		record *v1alpha1.OaatGroupHistory
		now    time.Duration
		want   Adoption
	}{
		{
			name: "no record", group: group("new-uid", "/srv/a"), record: nil,
			want: Adoption{Verdict: NotPredecessor},
		},
		{
			name: "same items: every item takes its history, the run count goes on", group: group("new-uid", "/srv/a", "/srv/b"),
			record: full, now: time.Minute,
			want: Adoption{Verdict: Adopted, DeleteRecord: true, RunCount: 42, Adopted: []string{"/srv/a", "/srv/b"},
				Items: []v1alpha1.ItemStatus{adopted("/srv/a", a), adopted("/srv/b", b)}},
		},
		{
			name: "items removed meanwhile are not resurrected; a new item has no history", group: group("new-uid", "/srv/b", "/srv/new"),
			record: full, now: time.Minute,
			want: Adoption{Verdict: Adopted, DeleteRecord: true, RunCount: 42, Adopted: []string{"/srv/b"},
				Items: []v1alpha1.ItemStatus{adopted("/srv/b", b)}},
		},
		{
			name: "other items only: nothing to adopt, the record goes", group: group("new-uid", "/srv/x"),
			record: full, now: time.Minute,
			want: Adoption{Verdict: Adopted, DeleteRecord: true, RunCount: 42},
		},
		{
			name: "a renamed item takes the history of its old name", group: withRenames(group("new-uid", "/srv/a", "/srv/photos"), "/srv/photo", "/srv/photos"),
			record: full, now: time.Minute,
			want: Adoption{Verdict: Adopted, DeleteRecord: true, RunCount: 42, Adopted: []string{"/srv/a", "/srv/photos"},
				Items: []v1alpha1.ItemStatus{adopted("/srv/a", a), adopted("/srv/photos", photo)}},
		},
		{
			name: "a rename whose old name is still an item does not apply", group: withRenames(group("new-uid", "/srv/photo", "/srv/photos"), "/srv/photo", "/srv/photos"),
			record: full, now: time.Minute,
			want: Adoption{Verdict: Adopted, DeleteRecord: true, RunCount: 42, Adopted: []string{"/srv/photo"},
				Items: []v1alpha1.ItemStatus{adopted("/srv/photo", photo)}},
		},
		{
			name: "items from sources count as the group's items", group: group("new-uid"), items: []string{"/srv/b"},
			record: full, now: time.Minute,
			want: Adoption{Verdict: Adopted, DeleteRecord: true, RunCount: 42, Adopted: []string{"/srv/b"},
				Items: []v1alpha1.ItemStatus{adopted("/srv/b", b)}},
		},
		{
			name:   "an entry with history of the group's own is kept, an empty one filled; adopting again changes nothing",
			group:  withStatus(group("new-uid", "/srv/a", "/srv/b"), 50, ownRun, v1alpha1.ItemStatus{Name: "/srv/b"}),
			record: full, now: time.Minute,
			want: Adoption{Verdict: Adopted, DeleteRecord: true, RunCount: 50, Adopted: []string{"/srv/b"},
				Items: []v1alpha1.ItemStatus{ownRun, adopted("/srv/b", b)}},
		},
		{
			name: "expired: nothing adopted, the record goes", group: group("new-uid", "/srv/a"),
			record: full, now: DefaultRetention,
			want: Adoption{Verdict: RecordExpired, DeleteRecord: true},
		},
		{
			name: "another OaatType: nothing adopted, the record goes", group: withType(group("new-uid", "/srv/a"), "verifier"),
			record: full, now: time.Minute,
			want: Adoption{Verdict: OtherType, DeleteRecord: true},
		},
		{
			name: "a record of another namespace is left alone", group: inNamespace(group("new-uid", "/srv/a"), "other"),
			record: full, now: time.Minute,
			want: Adoption{Verdict: NotPredecessor},
		},
		{
			name: "a record of the group itself is left alone", group: group("old-uid", "/srv/a"),
			record: full, now: time.Minute,
			want: Adoption{Verdict: NotPredecessor},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items := c.items
			if items == nil {
				items = c.group.Spec.OaatItems
			}
			before := c.record.DeepCopy()
			got := Adopt(AdoptInput{Group: c.group, Items: items, Record: c.record, Now: t0.Add(c.now)})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Fatalf("Adopt (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, c.record); diff != "" {
				t.Fatalf("Adopt changed the record:\n%s", diff)
			}
			if got.Items != nil {
				again := withStatus(c.group.DeepCopy(), got.RunCount, got.Items...)
				if twice := Adopt(AdoptInput{Group: again, Items: items, Record: c.record, Now: t0.Add(c.now)}); twice.Items != nil {
					t.Fatalf("adopting again changed the items: %v", twice.Adopted)
				}
			}
		})
	}
}

func withRenames(g *v1alpha1.OaatGroup, fromTo ...string) *v1alpha1.OaatGroup {
	for i := 0; i+1 < len(fromTo); i += 2 {
		g.Spec.ItemRenames = append(g.Spec.ItemRenames, v1alpha1.ItemRename{From: fromTo[i], To: fromTo[i+1]})
	}
	return g
}

func withStatus(g *v1alpha1.OaatGroup, runCount int64, items ...v1alpha1.ItemStatus) *v1alpha1.OaatGroup {
	g.Status.RunCount = runCount
	g.Status.Items = items
	return g
}

func withType(g *v1alpha1.OaatGroup, oaatType string) *v1alpha1.OaatGroup {
	g.Spec.OaatType = oaatType
	return g
}

func inNamespace(g *v1alpha1.OaatGroup, ns string) *v1alpha1.OaatGroup {
	g.Namespace = ns
	return g
}
