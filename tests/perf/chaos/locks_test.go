package main

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

func TestLockWatch(t *testing.T) {
	w := newLockWatch(10, t0)
	wantNamed := map[string][]string{
		"nas": {"g-0", "g-2", "g-3", "g-8"},
		"db":  {"g-1", "g-2", "g-3", "g-9"},
	}
	for lock, want := range wantNamed {
		if got := w.named(lock); !slices.Equal(got, want) {
			t.Errorf("groups naming %s = %v, want %v", lock, got, want)
		}
	}
	if got := w.describe(); got != "nas (capacity 1) named by 4 groups, db (capacity 2) named by 4 groups" {
		t.Errorf("describe() = %q", got)
	}
	peers := w.peers()
	if got := peers["g-0"]; !slices.Equal(slices.Sorted(slices.Values(got)), []string{"g-0", "g-2", "g-3", "g-8"}) {
		t.Errorf("peers of g-0 = %v", got)
	}
	if got := peers["g-2"]; len(got) != 6 {
		t.Errorf("peers of g-2, naming both locks = %v, want the six groups naming either", got)
	}
	if _, ok := peers["g-4"]; ok {
		t.Error("g-4 names no lock but has peers")
	}

	// g-4 names nas for a while: it is a peer of nas's groups from then on.
	w.setNamed("nas", "g-4", true, t0.Add(time.Minute))
	w.setNamed("nas", "g-4", false, t0.Add(2*time.Minute))
	if !w.namedThroughout("nas", "g-4", t0.Add(70*time.Second), t0.Add(80*time.Second)) || w.names("nas", "g-4") ||
		w.namedDuring("nas", "g-4", t0, t0.Add(50*time.Second)) || !w.namedDuring("nas", "g-4", t0, t0.Add(time.Minute)) {
		t.Error("the span of g-4 naming nas is not [1m, 2m]")
	}
	if got := w.peers()["g-4"]; len(got) != 5 {
		t.Errorf("peers of g-4 = %v, want nas's five groups", got)
	}
	w.setCapacity("db", 1, t0.Add(time.Minute))
	w.setCapacity("db", 3, t0.Add(2*time.Minute))
	for _, tt := range []struct {
		from, to time.Duration
		want     int
	}{{0, 10 * time.Second, 2}, {50 * time.Second, 70 * time.Second, 2}, {70 * time.Second, 80 * time.Second, 1}, {70 * time.Second, 3 * time.Minute, 3}} {
		if got := w.maxCapacity("db", t0.Add(tt.from), t0.Add(tt.to)); got != tt.want {
			t.Errorf("highest capacity of db in [%s, %s] = %d, want %d", tt.from, tt.to, got, tt.want)
		}
	}
}

// TestLockStarts: a start beside as many holders as the capacity is an excess; runs that started
// before a cut, or before their group named the lock, may outnumber it but no run may start
// while they do; a start within lockGrace of its group's change of locks is not checked.
func TestLockStarts(t *testing.T) {
	life := func(name, group string, from, to time.Duration) perfkit.PodLife {
		return perfkit.PodLife{Namespace: namespace, Name: name, Group: group,
			Created: t0.Add(from).Truncate(time.Second), SeenCreated: t0.Add(from), SeenEnded: t0.Add(to), FinishedAt: t0.Add(to).Truncate(time.Second)}
	}
	tests := []struct {
		name        string
		lock        string // nas when empty
		edit        func(w *lockWatch)
		pods        []perfkit.PodLife
		wantChecked int
		wantExcused int
		wantMost    int
		wantExcess  int
	}{
		{name: "one after the other",
			pods:        []perfkit.PodLife{life("a", "g-0", 20*time.Second, 30*time.Second), life("b", "g-8", 31*time.Second, 40*time.Second)},
			wantChecked: 2, wantMost: 1},
		{name: "a start beside a holder of a lock of capacity 1",
			pods:        []perfkit.PodLife{life("a", "g-0", 20*time.Second, 30*time.Second), life("b", "g-8", 25*time.Second, 40*time.Second)},
			wantChecked: 2, wantMost: 2, wantExcess: 1},
		{name: "an end seen late is refuted by the finished container",
			pods: []perfkit.PodLife{
				{Namespace: namespace, Name: "a", Group: "g-0", Created: t0.Add(20 * time.Second), SeenCreated: t0.Add(20 * time.Second),
					SeenEnded: t0.Add(35 * time.Second), FinishedAt: t0.Add(30 * time.Second)},
				life("b", "g-8", 31*time.Second, 40*time.Second)},
			wantChecked: 2, wantMost: 1},
		{name: "a group that does not name the lock runs beside it",
			pods:        []perfkit.PodLife{life("a", "g-0", 20*time.Second, 30*time.Second), life("b", "g-1", 25*time.Second, 40*time.Second)},
			wantChecked: 1, wantMost: 1},
		{name: "the lock added to a running group: its run holds a slot once the change is older than the grace",
			edit: func(w *lockWatch) { w.setNamed("nas", "g-1", true, t0.Add(22*time.Second)) },
			pods: []perfkit.PodLife{life("r", "g-1", 20*time.Second, 60*time.Second),
				life("early", "g-0", 25*time.Second, 28*time.Second), life("late", "g-8", 40*time.Second, 45*time.Second)},
			wantChecked: 2, wantMost: 2, wantExcess: 1},
		{name: "a start within the grace of its group's change of locks is not checked",
			edit:        func(w *lockWatch) { w.setNamed("nas", "g-1", true, t0.Add(22*time.Second)) },
			pods:        []perfkit.PodLife{life("a", "g-0", 20*time.Second, 40*time.Second), life("b", "g-1", 25*time.Second, 30*time.Second)},
			wantChecked: 1, wantExcused: 1, wantMost: 1},
		{name: "a removed lock still counts the run that started under it",
			edit:        func(w *lockWatch) { w.setNamed("nas", "g-0", false, t0.Add(22*time.Second)) },
			pods:        []perfkit.PodLife{life("a", "g-0", 20*time.Second, 60*time.Second), life("b", "g-8", 40*time.Second, 45*time.Second)},
			wantChecked: 2, wantMost: 2, wantExcess: 1},
		{name: "a capacity cut below the holders: they drain, no start while they do", lock: "db",
			edit: func(w *lockWatch) { w.setCapacity("db", 1, t0.Add(30*time.Second)) },
			pods: []perfkit.PodLife{life("a", "g-1", 20*time.Second, 60*time.Second), life("b", "g-9", 25*time.Second, 50*time.Second),
				life("c", "g-2", 45*time.Second, 48*time.Second), life("d", "g-3", 61*time.Second, 65*time.Second)},
			wantChecked: 4, wantMost: 3, wantExcess: 1},
		{name: "a start right after a cut may see the old capacity", lock: "db",
			edit:        func(w *lockWatch) { w.setCapacity("db", 1, t0.Add(30*time.Second)) },
			pods:        []perfkit.PodLife{life("a", "g-1", 20*time.Second, 60*time.Second), life("b", "g-9", 35*time.Second, 50*time.Second)},
			wantChecked: 2, wantMost: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLockWatch(10, t0)
			if tt.edit != nil {
				tt.edit(w)
			}
			lock := cmp.Or(tt.lock, "nas")
			r := w.starts(lock, tt.pods)
			if r.checked != tt.wantChecked || r.excused != tt.wantExcused || r.most != tt.wantMost || len(r.excess) != tt.wantExcess {
				t.Fatalf("checked %d, excused %d, most %d, excess %v; want %d, %d, %d, %d excess",
					r.checked, r.excused, r.most, r.excess, tt.wantChecked, tt.wantExcused, tt.wantMost, tt.wantExcess)
			}
		})
	}
}

func TestBoundItems(t *testing.T) {
	h := newSpecHistory()
	for _, g := range []string{"x", "y", "z"} {
		for _, item := range []string{"1", "2", "3"} {
			h.add(g, item, at(0))
		}
	}
	h.peers = map[string][]string{"x": {"x", "y"}, "y": {"x", "y"}}
	if got := h.boundItems("x"); got != 6 {
		t.Errorf("boundItems(x) = %d, want 6: its items and y's", got)
	}
	if got := h.boundItems("z"); got != 3 {
		t.Errorf("boundItems(z) = %d, want 3: a group without locks counts its own items", got)
	}
}
