package locks

import (
	"slices"
	"testing"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// input is the input of a group with these locks.
func input(all ...v1alpha1.Lock) Input {
	in := Input{Locks: map[string]v1alpha1.Lock{}, NamespaceRead: true}
	for _, l := range all {
		in.Locks[l.LockKey()] = l
	}
	return in
}

// holdersOf names the holders of each update, for a whole-value comparison.
func holdersOf(updates []Update) map[string][]string {
	out := map[string][]string{}
	for _, u := range updates {
		names := []string{}
		for _, h := range u.Holders {
			names = append(names, h.Group+"/"+h.Pod)
		}
		out[u.Lock.LockKey()] = names
	}
	return out
}

func TestTake(t *testing.T) {
	g := group("a", []string{"nas", "db"}, "", nil)
	mine := Claim{Since: t0, Namespace: "ns", Group: "a"}
	run := holder("a", "a-x-2")
	tests := []struct {
		name        string
		in          Input
		wantBlocked []string
		want        map[string][]string
	}{
		{name: "both free, the group's ended run replaced",
			in:   input(lock("nas", 1, holder("a", "a-x-1")), lock("db", 2, holder("b", "b-x-1"))),
			want: map[string][]string{"db": {"a/a-x-2", "b/b-x-1"}, "nas": {"a/a-x-2"}}},
		{name: "one full: none taken",
			in:          input(lock("nas", 1, holder("b", "b-x-1")), lock("db", 2)),
			wantBlocked: []string{"nas"}},
		{name: "another group's run that the lock does not list takes a slot",
			in: func() Input {
				in := input(lock("nas", 1), lock("db", 2))
				in.Runners = []Runner{{Namespace: "ns", Group: "c", Pod: "c-x-1", Locks: []string{"nas"}}}
				return in
			}(),
			wantBlocked: []string{"nas"}},
		{name: "an earlier claim keeps the free slot, a later one does not",
			in: func() Input {
				in := input(lock("nas", 1), lock("db", 1))
				in.Waiters = []Waiter{
					{Namespace: "ns", Group: "early", Since: t0.Add(-time.Minute), Locks: []string{"db"}},
					{Namespace: "ns", Group: "late", Since: t0.Add(time.Minute), Locks: []string{"nas"}},
				}
				return in
			}(),
			wantBlocked: []string{"db"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acquire, blocked, _ := Take(&g, tt.in, mine, run, t0)
			if !slices.Equal(blocked, tt.wantBlocked) {
				t.Fatalf("blocked %v, want %v", blocked, tt.wantBlocked)
			}
			if got := holdersOf(acquire); len(tt.want) > 0 || len(got) > 0 {
				if !equalHolders(got, tt.want) {
					t.Fatalf("acquire %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func equalHolders(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestAssert: a live run that a lock does not list (created again, or named by an edit) is
// listed, over the lock's capacity if need be, and the overload is reported; a lock that lists it,
// a lock being acquired and an ended run are left alone.
func TestAssert(t *testing.T) {
	g := group("a", []string{"nas", "db", "tape"}, "a-x-1", nil)
	cr := g.Status.CurrentRun
	in := input(lock("nas", 1, holder("b", "b-x-1")), lock("db", 2), lock("tape", 1, holder("a", "a-x-1")))
	updates, over := Assert(&g, in, cr, true, nil)
	if got, want := holdersOf(updates), map[string][]string{"db": {"a/a-x-1"}, "nas": {"a/a-x-1", "b/b-x-1"}}; !equalHolders(got, want) {
		t.Fatalf("asserted %v, want %v", got, want)
	}
	if want := []Overload{{Key: "nas", Holders: 2, Capacity: 1}}; !slices.Equal(over, want) {
		t.Fatalf("overloads %v, want %v", over, want)
	}
	if u, _ := Assert(&g, in, cr, true, []Update{{Lock: in.Locks["db"]}}); !equalHolders(holdersOf(u), map[string][]string{"nas": {"a/a-x-1", "b/b-x-1"}}) {
		t.Fatalf("asserted %v while db is acquired, want nas only", holdersOf(u))
	}
	if u, o := Assert(&g, in, cr, false, nil); u != nil || o != nil {
		t.Fatalf("asserted %v, %v for a run whose pod has ended", u, o)
	}
}

// TestRelease: the group's slots of an ended run, or of an earlier group of its name, are given
// back; its current run's slot, other groups' slots and locks being acquired are not.
func TestRelease(t *testing.T) {
	g := group("a", []string{"nas", "db"}, "a-x-2", nil)
	earlier := holder("a", "a-x-0")
	earlier.GroupUID = "earlier-uid"
	in := input(
		lock("nas", 2, holder("a", "a-x-1"), holder("b", "b-x-1")), // an ended run
		lock("db", 1, holder("a", "a-x-2")),                        // the current run
		lock("tape", 1, earlier),                                   // held by an earlier group of the name
	)
	got := holdersOf(Release(&g, in, g.Status.CurrentRun, nil))
	if want := map[string][]string{"nas": {"b/b-x-1"}, "tape": {}}; !equalHolders(got, want) {
		t.Fatalf("released %v, want %v", got, want)
	}
	got = holdersOf(Release(&g, in, g.Status.CurrentRun, []Update{{Lock: in.Locks["nas"]}}))
	if want := map[string][]string{"tape": {}}; !equalHolders(got, want) {
		t.Fatalf("released %v while nas is acquired, want tape only", got)
	}
	if !StaleHolder(earlier, &g) || StaleHolder(holder("a", "a-x-2"), &g) || !StaleHolder(holder("a", "a-x-1"), &g) {
		t.Fatal("StaleHolder: want the earlier group's and the ended run's slots stale, the current run's not")
	}
}
