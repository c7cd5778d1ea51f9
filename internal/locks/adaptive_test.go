package locks

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
)

// adaptiveLock is the OaatLock nas of the capacity with spec.adaptive between minimum and maximum.
func adaptiveLock(capacity, minimum, maximum int32) *v1alpha1.OaatLock {
	l := lock("nas", capacity)
	l.Spec.Adaptive = &v1alpha1.AdaptiveCapacity{Min: minimum, Max: maximum}
	return l
}

// run is a run of item x that a group recorded: its result, exit code and reason, and the item's
// kept durations after it (its own last).
type run struct {
	result v1alpha1.RunResult
	code   *int32
	reason string
	recent []int64
}

var (
	// fast is a success of an item with no baseline yet.
	fast = run{result: v1alpha1.ResultSucceeded, reason: "Completed", recent: []int64{60}}
	// usual is a success at its item's median of 100 s.
	usual = run{result: v1alpha1.ResultSucceeded, reason: "Completed", recent: []int64{100, 100, 100, 100}}
	// sluggish is a success at twice its item's median: neither fast nor slow enough to halve.
	sluggish = run{result: v1alpha1.ResultSucceeded, reason: "Completed", recent: []int64{100, 100, 100, 200}}
	// crawling is a success at 3.1 times its item's median.
	crawling = run{result: v1alpha1.ResultSucceeded, reason: "Completed", recent: []int64{100, 100, 100, 310}}
	// unreachable is a failure with exit code 75, the breaker's counted code in the tests.
	unreachable = run{result: v1alpha1.ResultFailed, code: ptr.To[int32](75), reason: "Error", recent: []int64{5}}
	// buggy is a failure with exit code 1, which the breaker does not count.
	buggy = run{result: v1alpha1.ResultFailed, code: ptr.To[int32](1), reason: "Error", recent: []int64{5}}
	// hopeless is a failure with exit code 75 listed in spec.exitCodes.doNotRetry too.
	hopeless = run{result: v1alpha1.ResultFailed, code: ptr.To[int32](3), reason: "Error", recent: []int64{5}}
	// interrupted is a run stopped by a disruption.
	interrupted = run{result: v1alpha1.ResultInterrupted, reason: "Disrupted"}
)

// counting counts exit codes 75 and 3 towards the breaker, 3 being of doNotRetry too.
var counting = groupspec.FailureCounting{ExitCodes: []int32{75, 3}, DoNotRetry: []int32{3}}

// recorded is the member g, whose run of item x in pod the group recorded as r.
func recorded(g, pod string, r run) Member {
	m := grp(g).m()
	m.Counting = counting
	m.Items = []v1alpha1.ItemStatus{{Name: "x", LastPodName: pod, LastResult: r.result, LastExitCode: r.code, LastReason: r.reason, RecentRunSeconds: r.recent}}
	return m
}

// release reviews l at now, its one holder the run of pod taken at since that its group m
// released, and writes the review into l as the lock's reconciler does.
func release(l *v1alpha1.OaatLock, m Member, pod string, since, now time.Duration) Review {
	l.Status.Holders = holders(holderAt(m.Name, pod, since))
	in := reviewOf(l, []Member{m})
	in.Now = t0.Add(now)
	r := Decide(in)
	l.Status.Holders, l.Status.Adaptive = r.Holders, r.Adaptive
	return r
}

// TestAdaptiveLaw plays sequences of released runs through the lock's review, one review per run
// a minute apart, each run taken 30 s before its review, and checks the adaptive capacity after
// each.
func TestAdaptiveLaw(t *testing.T) {
	for _, tc := range []struct {
		name             string
		capacity, lo, hi int32
		start            int32 // the adaptive capacity before the first run; 0 for none yet
		runs             []run
		want             []int32
		lastReason       v1alpha1.AdaptiveChangeReason
	}{
		{name: "starts at min and grows by one after 5 fast successes", capacity: 8, lo: 1, hi: 8,
			runs: []run{fast, fast, fast, fast, fast, usual, usual, usual, usual, usual},
			want: []int32{1, 1, 1, 1, 2, 2, 2, 2, 2, 3}, lastReason: v1alpha1.AdaptiveFastSuccesses},
		{name: "a success at twice the median starts the count again", capacity: 8, lo: 1, hi: 8,
			runs: []run{fast, fast, fast, fast, sluggish, fast, fast, fast, fast, fast},
			want: []int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 2}, lastReason: v1alpha1.AdaptiveFastSuccesses},
		{name: "a counted failure halves it", capacity: 8, lo: 1, hi: 8, start: 6,
			runs: []run{unreachable, unreachable}, want: []int32{3, 2}, lastReason: v1alpha1.AdaptiveCountedFailure},
		{name: "halving rounds up, and 1 stays 1", capacity: 8, lo: 1, hi: 8, start: 5,
			runs: []run{unreachable, unreachable, unreachable, unreachable}, want: []int32{3, 2, 1, 1}, lastReason: v1alpha1.AdaptiveCountedFailure},
		{name: "a run over 3 times its median halves it", capacity: 8, lo: 1, hi: 8, start: 5,
			runs: []run{crawling}, want: []int32{3}, lastReason: v1alpha1.AdaptiveSlowRun},
		{name: "halving stops at min", capacity: 8, lo: 3, hi: 8, start: 4,
			runs: []run{unreachable, unreachable}, want: []int32{3, 3}, lastReason: v1alpha1.AdaptiveCountedFailure},
		{name: "the item's own failures, doNotRetry's and interruptions change nothing", capacity: 8, lo: 1, hi: 8, start: 4,
			runs: []run{buggy, hopeless, interrupted, buggy}, want: []int32{4, 4, 4, 4}},
		{name: "they do not break the fast successes either", capacity: 8, lo: 1, hi: 8,
			runs: []run{fast, fast, buggy, fast, interrupted, fast, fast}, want: []int32{1, 1, 1, 1, 1, 1, 2}, lastReason: v1alpha1.AdaptiveFastSuccesses},
		{name: "growth stops at max", capacity: 8, lo: 1, hi: 2, start: 2,
			runs: []run{fast, fast, fast, fast, fast}, want: []int32{2, 2, 2, 2, 2}},
		{name: "growth stops at the capacity in force", capacity: 2, lo: 1, hi: 8, start: 2,
			runs: []run{fast, fast, fast, fast, fast}, want: []int32{2, 2, 2, 2, 2}},
		{name: "halving starts from the capacity in use, under the capacity in force", capacity: 2, lo: 1, hi: 8, start: 8,
			runs: []run{unreachable}, want: []int32{1}, lastReason: v1alpha1.AdaptiveCountedFailure},
		{name: "an edit of min or max keeps the capacity within them", capacity: 8, lo: 3, hi: 5, start: 7,
			runs: []run{buggy}, want: []int32{5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := adaptiveLock(tc.capacity, tc.lo, tc.hi)
			if tc.start > 0 {
				l.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: tc.start}
			}
			var last Review
			for i, r := range tc.runs {
				pod := fmt.Sprintf("p-%d", i)
				now := time.Duration(i+1) * time.Minute
				last = release(l, recorded("a", pod, r), pod, now-30*time.Second, now)
				if got := last.Adaptive.Capacity; got != tc.want[i] {
					t.Fatalf("after run %d (%s): adaptive capacity %d, want %d; status %+v", i, r.result, got, tc.want[i], last.Adaptive)
				}
				if len(last.Holders) != 0 {
					t.Fatalf("after run %d: holders %v, want none", i, last.Holders)
				}
			}
			if got := l.Status.Adaptive.LastChange; tc.lastReason == "" && got != nil && got.At.After(t0) {
				t.Errorf("a change was recorded: %+v", got)
			} else if tc.lastReason != "" && (got == nil || got.Reason != tc.lastReason) {
				t.Errorf("last change %+v, want reason %s", got, tc.lastReason)
			}
		})
	}
}

// TestAdaptiveChangeIsReported proves that a change is recorded with its times, capacities and
// cause, and reported on the lock: Warning when it halves, Normal when it grows.
func TestAdaptiveChangeIsReported(t *testing.T) {
	l := adaptiveLock(8, 1, 8)
	l.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: 4}
	r := release(l, recorded("a", "p-1", crawling), "p-1", 0, time.Minute)
	want := &v1alpha1.AdaptiveChange{At: *at(time.Minute), From: 4, To: 2, Reason: v1alpha1.AdaptiveSlowRun,
		Message: `the run of item "x" of group a (pod p-1) took 310 s, 3.1 times its item's median of 100 s`}
	if d := diff(want, r.Adaptive.LastChange); d != "" {
		t.Errorf("last change (-want +got):\n%s", d)
	}
	if len(r.Events) != 1 || r.Events[0].Reason != v1alpha1.ReasonCapacityAdapted || r.Events[0].Type != "Warning" || r.Events[0].Group.Name != "" {
		t.Fatalf("events %+v, want one Warning CapacityAdapted on the lock", r.Events)
	}
	for i := range v1alpha1.AdaptiveGrowAfter {
		pod := fmt.Sprintf("q-%d", i)
		r = release(l, recorded("a", pod, fast), pod, 2*time.Minute, time.Duration(3+i)*time.Minute)
	}
	if len(r.Events) != 1 || r.Events[0].Type != "Normal" || r.Adaptive.Capacity != 3 || r.Adaptive.LastChange.Reason != v1alpha1.AdaptiveFastSuccesses {
		t.Errorf("after 5 fast successes: events %+v, status %+v; want one Normal event and capacity 3", r.Events, r.Adaptive)
	}
}

// TestAdaptiveJudgesEachRunOnce proves the level-based judging: a run whose pod ended before its
// group recorded it waits in status.adaptive.ending and is judged once recorded; a review decided
// again from the same statuses decides the same; runs taken before the last change, of a group
// gone, or released without running are not judged.
func TestAdaptiveJudgesEachRunOnce(t *testing.T) {
	l := adaptiveLock(8, 1, 8)
	l.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: 4}

	// The pod ended; the group's status still names it as its current run.
	m := grp("a").running("p-1").ended().m()
	m.Counting = counting
	r := release(l, m, "p-1", 0, time.Minute)
	if len(r.Holders) != 0 || len(r.Adaptive.Ending) != 1 || r.Adaptive.Capacity != 4 {
		t.Fatalf("pod ended, not recorded: holders %v, status %+v; want the run ending, capacity 4", r.Holders, r.Adaptive)
	}
	// Reviewed again with the group unchanged: still ending.
	in := reviewOf(l, []Member{m})
	in.Now = t0.Add(90 * time.Second)
	if again := Decide(in); len(again.Adaptive.Ending) != 1 || again.Adaptive.Capacity != 4 {
		t.Fatalf("reviewed again: status %+v, want the run still ending", again.Adaptive)
	}
	// The group records the failure: judged, halved, no longer ending.
	in = reviewOf(l, []Member{recorded("a", "p-1", unreachable)})
	in.Now = t0.Add(2 * time.Minute)
	r = Decide(in)
	if len(r.Adaptive.Ending) != 0 || r.Adaptive.Capacity != 2 {
		t.Fatalf("recorded: status %+v, want capacity 2 and nothing ending", r.Adaptive)
	}
	// The same review decided again from the same lock decides the same.
	if again := Decide(in); diff(r.Adaptive, again.Adaptive) != "" {
		t.Errorf("decided twice from the same input: %s", diff(r.Adaptive, again.Adaptive))
	}
	l.Status.Adaptive = r.Adaptive

	for _, tc := range []struct {
		name string
		m    Member
		pod  string
	}{
		{"taken before the last change, a halving", recorded("a", "p-2", unreachable), "p-2"},
		{"of a group gone", recorded("a", "p-3", unreachable), "p-3"},
		{"released without running (the item's last pod is another)", recorded("a", "p-0", unreachable), "p-4"},
	} {
		since := 3 * time.Minute
		if tc.name == "taken before the last change, a halving" {
			since = time.Minute
		}
		members := []Member{tc.m}
		if tc.name == "of a group gone" {
			members = nil
		}
		l.Status.Holders = holders(holderAt("a", tc.pod, since))
		in := reviewOf(l, members)
		in.Now = t0.Add(4 * time.Minute)
		if r := Decide(in); r.Adaptive.Capacity != 2 || len(r.Adaptive.Ending) != 0 || len(r.Events) != 0 {
			t.Errorf("%s: status %+v, events %v; want capacity 2 unchanged and nothing ending", tc.name, r.Adaptive, r.Events)
		}
	}
}

// TestAdaptiveKeepsAnotherInstallationsEndingRun proves that an installation sharing a
// ClusterOaatLock keeps in status.adaptive.ending the ending runs of the namespaces it does not
// serve, for their own installation to judge, and judges its own.
func TestAdaptiveKeepsAnotherInstallationsEndingRun(t *testing.T) {
	l := clusterLock("db", 8)
	l.Spec.Adaptive = &v1alpha1.AdaptiveCapacity{Min: 1, Max: 8}
	theirs, mine := clusterHolder("theirs", "b", "pb-1"), clusterHolder("mine", "a", "pa-1")
	l.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: 4, Ending: holders(theirs, mine)}
	m := grp("a").in("mine").m()
	m.Counting = counting
	m.Items = recorded("a", "pa-1", unreachable).Items
	in := reviewOf(l, []Member{m})
	in.Namespaces, in.Now = []string{"mine"}, t0.Add(time.Minute)
	r := Decide(in)
	if d := diff(holders(theirs), r.Adaptive.Ending); d != "" || r.Adaptive.Capacity != 2 {
		t.Errorf("ending (-want +got):\n%s\ncapacity %d; want the other installation's run kept, and mine judged: 2", d, r.Adaptive.Capacity)
	}
}

// TestAdaptiveCapacityInUse proves what the lock grants: the adaptive capacity, at most the
// capacity in force, and 1 while a group naming it has its breaker open.
func TestAdaptiveCapacityInUse(t *testing.T) {
	waiting := members(grp("a").requesting(0, "pa"), grp("b").requesting(time.Second, "pb"), grp("c").requesting(2*time.Second, "pc"))
	for _, tc := range []struct {
		name     string
		capacity int32
		adaptive int32
		open     bool
		granted  int
	}{
		{"the adaptive capacity", 8, 2, false, 2},
		{"the capacity in force when lower", 1, 2, false, 1},
		{"1 while a group's breaker is open", 8, 3, true, 1},
	} {
		l := adaptiveLock(tc.capacity, 1, 8)
		l.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: tc.adaptive}
		ms := append([]Member(nil), waiting...)
		if tc.open {
			ms[2].Breaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen}
		}
		r := Decide(reviewOf(l, ms))
		if len(r.Granted) != tc.granted || int(r.Adaptive.CapacityInUse) != tc.granted {
			t.Errorf("%s: granted %d, in use %d; want %d", tc.name, len(r.Granted), r.Adaptive.CapacityInUse, tc.granted)
		}
	}
	if r := Decide(reviewOf(lock("nas", 2), waiting)); r.Adaptive != nil || len(r.Granted) != 2 {
		t.Errorf("without spec.adaptive: status %+v, granted %d; want none and the capacity in force", r.Adaptive, len(r.Granted))
	}
}

// TestAdaptiveHalvesAfterGrowing proves that a growth does not shield the runs that took their
// slot before it: a counted failure of one still halves the capacity.
func TestAdaptiveHalvesAfterGrowing(t *testing.T) {
	l := adaptiveLock(8, 1, 8)
	l.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: 4, LastChange: &v1alpha1.AdaptiveChange{
		At: *at(time.Minute), From: 3, To: 4, Reason: v1alpha1.AdaptiveFastSuccesses}}
	if r := release(l, recorded("a", "p-1", unreachable), "p-1", 0, 2*time.Minute); r.Adaptive.Capacity != 2 {
		t.Errorf("a failure of a run taken before a growth: capacity %d, want 2", r.Adaptive.Capacity)
	}
}

// TestAdaptiveTwoLocksBothShrink proves that a run holding two adaptive locks is judged by the
// review of each: its counted failure halves both, and its fast successes grow both.
func TestAdaptiveTwoLocksBothShrink(t *testing.T) {
	nas, db := adaptiveLock(8, 1, 8), lock("db", 8)
	db.Spec.Adaptive = &v1alpha1.AdaptiveCapacity{Min: 1, Max: 8}
	nas.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: 4}
	db.Status.Adaptive = &v1alpha1.AdaptiveCapacityStatus{Capacity: 6}
	for _, l := range []*v1alpha1.OaatLock{nas, db} {
		release(l, recorded("a", "p-1", unreachable), "p-1", 0, time.Minute)
	}
	if nas.Status.Adaptive.Capacity != 2 || db.Status.Adaptive.Capacity != 3 {
		t.Fatalf("after a counted failure: nas %d, db %d; want 2 and 3", nas.Status.Adaptive.Capacity, db.Status.Adaptive.Capacity)
	}
	for i := range v1alpha1.AdaptiveGrowAfter {
		pod := fmt.Sprintf("q-%d", i)
		for _, l := range []*v1alpha1.OaatLock{nas, db} {
			release(l, recorded("a", pod, fast), pod, 2*time.Minute, time.Duration(3+i)*time.Minute)
		}
	}
	if nas.Status.Adaptive.Capacity != 3 || db.Status.Adaptive.Capacity != 4 {
		t.Errorf("after 5 fast successes: nas %d, db %d; want 3 and 4", nas.Status.Adaptive.Capacity, db.Status.Adaptive.Capacity)
	}
}
