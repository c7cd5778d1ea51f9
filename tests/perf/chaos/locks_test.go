package main

import (
	"cmp"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

func TestLockWatch(t *testing.T) {
	w := newLockWatch(runLocks(false), planGroups(10, 0), t0)
	wantNamed := map[string][]string{
		"nas": {"g-0", "g-2", "g-3", "g-8"},
		"db":  {"g-1", "g-2", "g-3", "g-6", "g-7", "g-9"},
	}
	for lock, want := range wantNamed {
		if got := w.named(lock); !slices.Equal(got, want) {
			t.Errorf("groups naming %s = %v, want %v", lock, got, want)
		}
	}
	if got := w.describe(); got != "nas (capacity 1) named by 4 groups, db (capacity 2) named by 6 groups" {
		t.Errorf("describe() = %q", got)
	}
	peers := w.peers()
	if got := peers["g-0"]; !slices.Equal(slices.Sorted(slices.Values(got)), []string{"g-0", "g-2", "g-3", "g-8"}) {
		t.Errorf("peers of g-0 = %v", got)
	}
	if got := peers["g-2"]; len(got) != 8 {
		t.Errorf("peers of g-2, naming both locks = %v, want the eight groups naming either", got)
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
	w.setSpec("db", lockSpec{capacity: 1}, t0.Add(time.Minute))
	w.setSpec("db", lockSpec{capacity: 3}, t0.Add(2*time.Minute))
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
			edit: func(w *lockWatch) { w.setSpec("db", lockSpec{capacity: 1}, t0.Add(30*time.Second)) },
			pods: []perfkit.PodLife{life("a", "g-1", 20*time.Second, 60*time.Second), life("b", "g-9", 25*time.Second, 50*time.Second),
				life("c", "g-2", 45*time.Second, 48*time.Second), life("d", "g-3", 61*time.Second, 65*time.Second)},
			wantChecked: 4, wantMost: 3, wantExcess: 1},
		{name: "an exclusive pod (g-6) starting beside a holder", lock: "db",
			pods:        []perfkit.PodLife{life("a", "g-1", 20*time.Second, 60*time.Second), life("e", "g-6", 40*time.Second, 45*time.Second)},
			wantChecked: 2, wantMost: 2, wantExcess: 1},
		{name: "a pod starting beside an exclusive holder", lock: "db",
			pods:        []perfkit.PodLife{life("e", "g-6", 20*time.Second, 60*time.Second), life("b", "g-9", 40*time.Second, 45*time.Second)},
			wantChecked: 2, wantMost: 2, wantExcess: 1},
		{name: "an exclusive pod alone, then a shared one", lock: "db",
			pods:        []perfkit.PodLife{life("e", "g-6", 20*time.Second, 30*time.Second), life("b", "g-9", 40*time.Second, 45*time.Second)},
			wantChecked: 2, wantMost: 1},
		{name: "a start right after a cut may see the old capacity", lock: "db",
			edit:        func(w *lockWatch) { w.setSpec("db", lockSpec{capacity: 1}, t0.Add(30*time.Second)) },
			pods:        []perfkit.PodLife{life("a", "g-1", 20*time.Second, 60*time.Second), life("b", "g-9", 35*time.Second, 50*time.Second)},
			wantChecked: 2, wantMost: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLockWatch(runLocks(false), planGroups(10, 0), t0)
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

// TestPlanWithSecondInstall: with a second installation, groups of both namespaces name the
// cluster lock, under names that differ across namespaces.
func TestPlanWithSecondInstall(t *testing.T) {
	plan := planGroups(10, 2)
	if len(plan) != 12 {
		t.Fatalf("%d groups, want 12", len(plan))
	}
	names := map[string]bool{}
	for _, g := range plan {
		if names[g.name] {
			t.Errorf("group name %s twice", g.name)
		}
		names[g.name] = true
		if len(g.locks)+len(g.clusterLocks) > 4 {
			t.Errorf("%s names more than four locks", g.key())
		}
		if g.namespace == bNamespace && (len(g.locks) > 0 || !slices.Equal(g.clusterLocks, []string{"shared"})) {
			t.Errorf("%s names %v and %v, want the cluster lock only", g.key(), g.locks, g.clusterLocks)
		}
	}
	if locks, cluster := locksOf(4, false); locks != nil || cluster != nil {
		t.Errorf("without a second installation g-4 names %v, %v", locks, cluster)
	}
	w := newLockWatch(runLocks(true), plan, t0)
	if got := w.named("shared"); !slices.Equal(got, []string{"b-0", "b-1", "g-4", "g-5"}) {
		t.Errorf("groups naming shared = %v", got)
	}
	if got := w.named("nas"); !slices.Equal(got, []string{"g-0", "g-2", "g-3", "g-5", "g-8"}) {
		t.Errorf("groups naming nas = %v", got)
	}
	want := "nas (capacity 1) named by 5 groups, db (capacity 2) named by 6 groups, ClusterOaatLock shared (capacity 2) named by 2 groups of chaos and 2 of chaos-b"
	if got := w.describe(); got != want {
		t.Errorf("describe() = %q, want %q", got, want)
	}
	if got := w.peers()["b-0"]; len(got) != 4 {
		t.Errorf("peers of b-0 = %v, want the four groups naming shared", got)
	}
}

// TestClusterLockStarts: the capacity check of the cluster lock counts the pods of both
// namespaces, and the runs of each.
func TestClusterLockStarts(t *testing.T) {
	life := func(ns, name, group string, from, to time.Duration) perfkit.PodLife {
		return perfkit.PodLife{Namespace: ns, Name: name, Group: group,
			Created: t0.Add(from).Truncate(time.Second), SeenCreated: t0.Add(from), SeenEnded: t0.Add(to), FinishedAt: t0.Add(to).Truncate(time.Second)}
	}
	w := newLockWatch(runLocks(true), planGroups(10, 2), t0)
	pods := []perfkit.PodLife{
		life(namespace, "a", "g-4", 20*time.Second, 40*time.Second),
		life(bNamespace, "b", "b-0", 25*time.Second, 50*time.Second),
		life(bNamespace, "c", "b-1", 30*time.Second, 35*time.Second), // a third beside two: over capacity 2
		life(namespace, "d", "g-5", 45*time.Second, 48*time.Second),  // beside b only
		life(namespace, "e", "g-6", 21*time.Second, 60*time.Second),  // names no lock
	}
	r := w.starts("shared", pods)
	if r.checked != 4 || r.most != 3 || len(r.excess) != 1 || r.runs[namespace] != 2 || r.runs[bNamespace] != 2 {
		t.Fatalf("checked %d, most %d, excess %v, runs %v; want 4, 3, one excess (c), 2 in each namespace",
			r.checked, r.most, r.excess, r.runs)
	}
	// A cut to 1 while a and b run: they drain, and d may not start beside b.
	w.setSpec("shared", lockSpec{capacity: 1}, t0.Add(26*time.Second))
	r = w.starts("shared", []perfkit.PodLife{pods[0], pods[1], pods[3]})
	if r.checked != 3 || len(r.excess) != 1 {
		t.Fatalf("after a cut: checked %d, excess %v; want 3, one excess (d beside b)", r.checked, r.excess)
	}
}

// TestJudgeHolders: a holder of the cluster lock is looked up in its own namespace, one of an
// OaatLock in the lock's; a holder whose pod its group (of its UID) names neither as its current
// run nor as its request for locks, or of a group that is gone, is stale.
func TestJudgeHolders(t *testing.T) {
	group := func(ns, name, uid, pod string) *v1alpha1.OaatGroup {
		g := &v1alpha1.OaatGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}}
		if pod != "" {
			g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "item-0", PodName: pod}
		}
		return g
	}
	groups := map[client.ObjectKey]*v1alpha1.OaatGroup{}
	for _, g := range []*v1alpha1.OaatGroup{group(namespace, "g-4", "u4", "p4"), group(bNamespace, "b-0", "ub", "pb"), group(bNamespace, "b-1", "ub1", "")} {
		groups[client.ObjectKeyFromObject(g)] = g
	}
	holder := func(ns, name, uid, pod string) v1alpha1.LockHolder {
		return v1alpha1.LockHolder{Namespace: ns, Group: name, GroupUID: uid, Item: "item-0", Pod: pod}
	}
	got := judgeHolders(clusterLock, []v1alpha1.LockHolder{
		holder(namespace, "g-4", "u4", "p4"),  // its run
		holder(bNamespace, "b-0", "ub", "pb"), // its run, in the other namespace
		holder(bNamespace, "b-1", "ub1", "p"), // its run ended
		holder(namespace, "b-0", "ub", "pb"),  // no b-0 in namespace: gone
	}, groups)
	want := []struct{ stale, gone bool }{{false, false}, {false, false}, {true, false}, {true, true}}
	for i, h := range got {
		if h.stale != want[i].stale || h.gone != want[i].gone {
			t.Errorf("holder %d (%s): stale %t, gone %t; want %t, %t", i, h, h.stale, h.gone, want[i].stale, want[i].gone)
		}
	}
	// A holder granted to a group's request (status.lockWait names its pod) is not stale; one whose
	// pod the request no longer names, or of another group of the same name (another UID), is.
	waiting := group(namespace, "w", "uw", "")
	waiting.Status.LockWait = &v1alpha1.LockWait{Locks: []string{"ClusterOaatLock/shared"}, Item: "item-0", Pod: "pw"}
	groups[client.ObjectKeyFromObject(waiting)] = waiting
	got = judgeHolders(clusterLock, []v1alpha1.LockHolder{
		holder(namespace, "w", "uw", "pw"),    // its request's pod
		holder(namespace, "w", "uw", "old"),   // a pod its request no longer names
		holder(namespace, "w", "other", "pw"), // an earlier group of the same name
	}, groups)
	for i, want := range []bool{false, true, true} {
		if got[i].stale != want || got[i].gone {
			t.Errorf("holder %d of the waiting group (%s): stale %t, gone %t; want %t, false", i, got[i], got[i].stale, got[i].gone, want)
		}
	}
	// An OaatLock's holders carry no namespace: they are of the lock's.
	if got := judgeHolders(sharedLocks[0], []v1alpha1.LockHolder{holder("", "g-4", "u4", "p4")}, groups); got[0].stale {
		t.Errorf("holder of nas with its run: %s", got[0])
	}
}

func TestCountLines(t *testing.T) {
	text := "a unknown namespace for the cache\nb\nc unknown namespace for the cache x"
	if got := countLines(text, outOfScope); got != 2 {
		t.Errorf("countLines = %d, want 2", got)
	}
}

// TestLockWatchSchedule: a capacity window recorded by setSpec brings its capacities at its start
// and its end, a later change drops those it recorded after it, and nextMinuteWindow opens at the
// first whole minute at least 5 s ahead.
func TestLockWatchSchedule(t *testing.T) {
	w := newLockWatch([]sharedLock{{name: "db", capacity: 2}}, nil, t0)
	window := nextMinuteWindow(t0.Add(57*time.Second), 0)
	if window.Start != "00:02" || window.End != "00:03" {
		t.Fatalf("window from %s to %s, want 00:02 to 00:03 (00:00:57 is less than 5 s before 00:01)", window.Start, window.End)
	}
	window = nextMinuteWindow(t0.Add(10*time.Second), 0)
	if window.Start != "00:01" || window.End != "00:02" {
		t.Fatalf("window from %s to %s, want 00:01 to 00:02", window.Start, window.End)
	}
	w.setSpec("db", lockSpec{capacity: 2, schedule: []v1alpha1.CapacityWindow{window}}, t0.Add(10*time.Second))
	for _, tt := range []struct {
		at   time.Duration
		want int
	}{{30 * time.Second, 2}, {time.Minute, 0}, {90 * time.Second, 0}, {2 * time.Minute, 2}} {
		if got := w.inForce("db", t0.Add(tt.at)); got != tt.want {
			t.Errorf("in force at %s: %d, want %d", tt.at, got, tt.want)
		}
	}
	if got := w.maxCapacity("db", t0.Add(65*time.Second), t0.Add(75*time.Second)); got != 0 {
		t.Errorf("highest capacity within the window: %d, want 0", got)
	}
	w.setSpec("db", lockSpec{capacity: 3}, t0.Add(30*time.Second))
	if got := w.inForce("db", t0.Add(90*time.Second)); got != 3 {
		t.Errorf("in force in the window after it was removed: %d, want 3", got)
	}
	if got := w.capacity("db"); got != 3 {
		t.Errorf("spec.capacity %d, want 3", got)
	}
}
