package locks

import (
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// reviewCase is a case of a table of Decide: the input, and the whole review wanted.
type reviewCase struct {
	name string
	in   ReviewInput
	want Review
}

// runReviews runs a table of Decide, each case checking the whole review and that the lock it read
// is unchanged.
func runReviews(t *testing.T, tests []reviewCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.in.Lock.DeepCopyObject()
			if d := diff(withCapacity(tt.want, tt.in.Lock), Decide(tt.in)); d != "" {
				t.Errorf("Decide (-want +got):\n%s", d)
			}
			if d := diff(before, tt.in.Lock); d != "" {
				t.Errorf("Decide changed the lock it read (-before +after):\n%s", d)
			}
		})
	}
}

// live and gone are the facts of a holder of a group gone (or being deleted) whose pod is live,
// or has ended; foreign, those of a holder of a namespace the installation does not serve.
var (
	live    = HolderFacts{PodLive: true}
	gone    = HolderFacts{}
	foreign = HolderFacts{Foreign: true}
)

// TestDecideKeep proves which holders the review keeps: that of a group (of the holder's UID)
// naming the pod as its current run whose pod has not ended, or as its request that does not
// yield the lock; that of a group gone (no member of its UID) or being deleted while its pod is
// live (Pending); a foreign holder, untouched. It drops the others, and a request that moved to
// another pod is granted afresh.
func TestDecideKeep(t *testing.T) {
	nas := func(hs ...v1alpha1.LockHolder) *v1alpha1.OaatLock { return lock("nas", 3, hs...) }
	a1 := holder("a", "a-1")
	runTable := []reviewCase{
		{name: "the group's live current run: kept",
			in:   reviewOf(nas(a1), members(grp("a").running("a-1"))),
			want: Review{Holders: holders(a1)}},
		{name: "the group's request: kept",
			in:   reviewOf(nas(a1), members(grp("a").requesting(0, "a-1"))),
			want: Review{Holders: holders(a1), WaitingGroups: 1}},
		{name: "the group's request yields the lock: dropped, not granted again",
			in:   reviewOf(nas(a1), members(grp("a").requesting(0, "a-1", "nas"))),
			want: Review{Dropped: holders(a1), WaitingGroups: 1}},
		{name: "the group's request yields another lock: kept",
			in:   reviewOf(nas(a1), members(grp("a").requesting(0, "a-1", "db"))),
			want: Review{Holders: holders(a1), WaitingGroups: 1}},
		{name: "a live group naming the pod neither way: dropped",
			in:   reviewOf(nas(a1), members(grp("a"))),
			want: Review{Dropped: holders(a1)}},
		{name: "the group's request moved to another pod: dropped, the new pod granted",
			in: reviewOf(nas(a1), members(grp("a").requesting(-time.Minute, "a-2"))),
			want: Review{Holders: holders(holder("a", "a-2")), Granted: holders(holder("a", "a-2")), Dropped: holders(a1),
				WaitingGroups: 1}},
		{name: "the current run's pod has ended: dropped",
			in:   reviewOf(nas(a1), members(grp("a").running("a-1").ended())),
			want: Review{Dropped: holders(a1)}},
		{name: "a group that no longer names the lock, its run live: kept",
			in:   reviewOf(nas(a1), members(grp("a").notNaming().running("a-1"))),
			want: Review{Holders: holders(a1)}},
		{name: "a group gone, its pod live: kept, Pending",
			in:   reviewOf(nas(a1), nil, live),
			want: Review{Holders: holders(a1), Pending: true}},
		{name: "a group gone, its pod ended: dropped",
			in:   reviewOf(nas(a1), nil, gone),
			want: Review{Dropped: holders(a1)}},
		{name: "a group of the same name and another UID runs the same pod name: the holder's group is gone, kept while its pod is live",
			in:   reviewOf(nas(a1), members(grp("a").uid("a-new-uid").running("a-1")), live),
			want: Review{Holders: holders(a1), Pending: true}},
		{name: "a group of the same name and another UID: the holder's group is gone, dropped once its pod ended",
			in:   reviewOf(nas(a1), members(grp("a").uid("a-new-uid")), gone),
			want: Review{Dropped: holders(a1)}},
		{name: "a foreign holder: untouched, whatever else",
			in:   reviewOf(nas(a1), nil, foreign),
			want: Review{Holders: holders(a1)}},
		{name: "a deleting group's live run: kept, Pending",
			in:   reviewOf(nas(a1), members(grp("a").deleting().running("a-1"))),
			want: Review{Holders: holders(a1), Pending: true}},
		{name: "a deleting group's ended run, its pod gone: dropped",
			in:   reviewOf(nas(a1), members(grp("a").deleting().running("a-1").ended()), gone),
			want: Review{Dropped: holders(a1)}},
		{name: "a deleting group's request, its pod not live: dropped",
			in:   reviewOf(nas(a1), members(grp("a").deleting().requesting(0, "a-1")), gone),
			want: Review{Dropped: holders(a1)}},
		{name: "a deleting group's request, its pod live: kept, Pending",
			in:   reviewOf(nas(a1), members(grp("a").deleting().requesting(0, "a-1")), live),
			want: Review{Holders: holders(a1), Pending: true}},
		{name: "several holders, each with its own facts, in order of the lock's holders",
			in: reviewOf(nas(holder("c", "c-1"), holder("b", "b-1"), a1),
				members(grp("a").running("a-1"), grp("b").running("b-1").ended()), live, gone, gone),
			want: Review{Holders: holders(a1, holder("c", "c-1")), Dropped: holders(holder("b", "b-1")), Pending: true}},
	}
	runReviews(t, runTable)
}

// overCapacity is the event of the run of item x in pod of group ns/name listed by OaatLock nas
// over its capacity of 1, the lock then holding n runs.
func overCapacity(name, pod string, n int) Event {
	return Event{Group: types.NamespacedName{Namespace: "ns", Name: name}, GroupUID: name + "-uid", Type: "Warning",
		Reason: v1alpha1.ReasonLockOverCapacity,
		Message: "OaatLock nas holds " + strconv.Itoa(n) + " runs, over its capacity of 1: the run of item \"x\" (pod " + pod +
			") started before the lock listed it; no group naming it starts until enough of its runs have ended"}
}

// TestDecideAssert proves that the review lists the live current run of a group naming the lock
// that the lock lacks, held since the run started: over the capacity if need be, with one
// LockOverCapacity event on the group (with its UID) per run listed over it, and then grants
// nothing; not a run whose pod has ended, nor that of a group no longer naming the lock.
func TestDecideAssert(t *testing.T) {
	a1 := holderAt("a", "a-1", 0)
	runAt := func(b mb, pod string, started time.Duration) mb {
		b = b.running(pod)
		b.Run.StartedAt = *at(started)
		return b
	}
	team := clusterHolder("team-a", "a", "a-1")
	team.Since = *at(-time.Hour)
	runReviews(t, []reviewCase{
		{name: "a run the lock lacks: listed since it started",
			in:   reviewOf(lock("nas", 2), members(runAt(grp("a"), "a-1", -time.Hour))),
			want: Review{Holders: holders(holderAt("a", "a-1", -time.Hour)), Asserted: holders(holderAt("a", "a-1", -time.Hour))}},
		{name: "over the capacity: listed, one event on the group, no request granted",
			in: reviewOf(lock("nas", 1, holder("b", "b-1")),
				members(grp("b").running("b-1"), grp("a").running("a-1"), grp("c").requesting(-time.Hour, "c-1"))),
			want: Review{Holders: holders(a1, holder("b", "b-1")), Asserted: holders(a1), WaitingGroups: 1,
				Events: []Event{overCapacity("a", "a-1", 2)}}},
		{name: "two runs over the capacity: an event each",
			in: reviewOf(lock("nas", 1, holder("b", "b-1")),
				members(grp("b").running("b-1"), grp("a").running("a-1"), grp("c").running("c-1"))),
			want: Review{Holders: holders(a1, holder("b", "b-1"), holder("c", "c-1")), Asserted: holders(a1, holder("c", "c-1")),
				Events: []Event{overCapacity("a", "a-1", 2), overCapacity("c", "c-1", 3)}}},
		{name: "a run whose pod has ended: not listed",
			in:   reviewOf(lock("nas", 1), members(grp("a").running("a-1").ended())),
			want: Review{}},
		{name: "a group no longer naming the lock: not listed",
			in:   reviewOf(lock("nas", 1), members(grp("a").notNaming().running("a-1"))),
			want: Review{}},
		{name: "the lock lists another pod of the group, which it drops: the run is listed",
			in:   reviewOf(lock("nas", 1, holder("a", "a-0")), members(grp("a").running("a-1"))),
			want: Review{Holders: holders(a1), Asserted: holders(a1), Dropped: holders(holder("a", "a-0"))}},
		{name: "a slot held under the group's name (by a group of another UID, its pod live): a group holds at most one, its run is not listed",
			in:   reviewOf(lock("nas", 2, holder("a", "a-0")), members(grp("a").uid("a-new-uid").running("a-1")), live),
			want: Review{Holders: holders(holder("a", "a-0")), Pending: true}},
		{name: "a deleting group's live run: listed",
			in:   reviewOf(lock("nas", 1), members(grp("a").deleting().running("a-1"))),
			want: Review{Holders: holders(a1), Asserted: holders(a1)}},
		{name: "a ClusterOaatLock: the holder names the group's namespace",
			in:   reviewOf(clusterLock("db", 1), members(runAt(grp("a").in("team-a"), "a-1", -time.Hour))),
			want: Review{Holders: holders(team), Asserted: holders(team)}},
	})
}

// TestDecideGrant proves how the review grants requests: in the one global order (the earlier
// since, then namespace/name), as many as free slots, to a group holding none, for the request's
// pod and item, held from now; not to a request of 0.2.0 (no pod), one yielding the lock, a group
// being deleted or one not naming the lock; nothing within a ClusterOaatLock's adoption window for
// an installation of some namespaces (RetryAt its end); and other installations' entries that
// count and began earlier each keep a slot.
func TestDecideGrant(t *testing.T) {
	created := func(l *v1alpha1.ClusterOaatLock, ago time.Duration) *v1alpha1.ClusterOaatLock {
		l.CreationTimestamp = metav1.NewTime(t0.Add(-ago))
		return l
	}
	withEntries := func(l *v1alpha1.ClusterOaatLock, entries ...v1alpha1.InstallationWaiting) *v1alpha1.ClusterOaatLock {
		l.Status.InstallationsWaiting = entries
		return l
	}
	installed := func(in ReviewInput, installation string) ReviewInput {
		in.Installation, in.AdoptionWindow = installation, DefaultAdoptionWindow
		return in
	}
	teamA := func(b mb) mb { return b.in("team-a") }
	ta := clusterHolder("team-a", "a", "a-1")
	mine := &v1alpha1.InstallationWaiting{Installation: "team-a", Waiting: 1, Since: *at(0), RenewedAt: *at(0)}
	three := members(grp("a").requesting(time.Minute, "a-1"), grp("b").requesting(-time.Minute, "b-1"), grp("c").requesting(0, "c-1"))
	runReviews(t, []reviewCase{
		{name: "capacity 2, three waiters: the two earliest",
			in: reviewOf(lock("nas", 2), three),
			want: Review{Holders: holders(holder("b", "b-1"), holder("c", "c-1")), Granted: holders(holder("b", "b-1"), holder("c", "c-1")),
				WaitingGroups: 3}},
		{name: "capacity 2, one held: the earliest",
			in: reviewOf(lock("nas", 2, holder("z", "z-1")), append(three, grp("z").running("z-1").m())),
			want: Review{Holders: holders(holder("b", "b-1"), holder("z", "z-1")), Granted: holders(holder("b", "b-1")),
				WaitingGroups: 3}},
		{name: "full: none",
			in:   reviewOf(lock("nas", 1, holder("z", "z-1")), append(three, grp("z").running("z-1").m())),
			want: Review{Holders: holders(holder("z", "z-1")), WaitingGroups: 3}},
		{name: "the same since: the smaller name",
			in:   reviewOf(lock("nas", 1), members(grp("b").requesting(0, "b-1"), grp("a").requesting(0, "a-1"))),
			want: Review{Holders: holders(holder("a", "a-1")), Granted: holders(holder("a", "a-1")), WaitingGroups: 2}},
		{name: "the same since: the smaller namespace before the smaller name",
			in: reviewOf(clusterLock("db", 1), members(grp("a").in("team-b").requesting(0, "a-1"), grp("z").in("team-a").requesting(0, "z-1"))),
			want: Review{Holders: holders(clusterHolder("team-a", "z", "z-1")), Granted: holders(clusterHolder("team-a", "z", "z-1")),
				WaitingGroups: 2}},
		{name: "a waiter already holding is not granted twice; the next one is",
			in: reviewOf(lock("nas", 2, holder("b", "b-1")), three),
			want: Review{Holders: holders(holder("b", "b-1"), holder("c", "c-1")), Granted: holders(holder("c", "c-1")),
				WaitingGroups: 3}},
		{name: "a request of 0.2.0 (no pod): not granted, counted",
			in:   reviewOf(lock("nas", 1), members(grp("a").requesting(-time.Hour, ""))),
			want: Review{WaitingGroups: 1}},
		{name: "a request yielding the lock: not granted, the next one is",
			in:   reviewOf(lock("nas", 1), members(grp("a").requesting(-time.Hour, "a-1", "nas"), grp("b").requesting(0, "b-1"))),
			want: Review{Holders: holders(holder("b", "b-1")), Granted: holders(holder("b", "b-1")), WaitingGroups: 2}},
		{name: "a group being deleted: not granted, not counted",
			in:   reviewOf(lock("nas", 1), members(grp("a").deleting().requesting(-time.Hour, "a-1"), grp("b").requesting(0, "b-1"))),
			want: Review{Holders: holders(holder("b", "b-1")), Granted: holders(holder("b", "b-1")), WaitingGroups: 1}},
		{name: "a group no longer naming the lock: not granted, not counted",
			in:   reviewOf(lock("nas", 1), members(grp("a").notNaming().requesting(-time.Hour, "a-1"))),
			want: Review{}},
		{name: "adoption window: a new ClusterOaatLock grants an installation of some namespaces nothing, retried at its end",
			in:   installed(reviewOf(created(clusterLock("db", 1), 10*time.Second), members(teamA(grp("a")).requesting(0, "a-1"))), "team-a"),
			want: Review{Waiting: mine, RetryAt: t0.Add(DefaultAdoptionWindow - 10*time.Second)}},
		{name: "adoption window: still listing the live runs it lacks",
			in: installed(reviewOf(created(clusterLock("db", 1), 10*time.Second),
				members(teamA(grp("a")).running("a-1"), teamA(grp("b")).requesting(0, "b-1"))), "team-a"),
			want: Review{Holders: holders(ta), Asserted: holders(ta), RetryAt: t0.Add(DefaultAdoptionWindow - 10*time.Second),
				Waiting: &v1alpha1.InstallationWaiting{Installation: "team-a", Waiting: 1, Since: *at(0), RenewedAt: *at(0)}}},
		{name: "adoption window passed: granted",
			in:   installed(reviewOf(created(clusterLock("db", 1), DefaultAdoptionWindow), members(teamA(grp("a")).requesting(0, "a-1"))), "team-a"),
			want: Review{Holders: holders(ta), Granted: holders(ta), Waiting: mine}},
		{name: "adoption window: none for an installation of all namespaces",
			in:   reviewOf(created(clusterLock("db", 1), 10*time.Second), members(teamA(grp("a")).requesting(0, "a-1"))),
			want: Review{Holders: holders(ta), Granted: holders(ta), WaitingGroups: 1}},
		{name: "adoption window: none for an OaatLock",
			in: installed(reviewOf(lockOf(lock("nas", 1), func(l *v1alpha1.OaatLock) { l.CreationTimestamp = *at(-10 * time.Second) }),
				members(grp("a").requesting(0, "a-1"))), "ns"),
			want: Review{Holders: holders(holder("a", "a-1")), Granted: holders(holder("a", "a-1")), WaitingGroups: 1}},
		{name: "another installation's earlier entry keeps the slot",
			in:   installed(reviewOf(withEntries(clusterLock("db", 1), entry("team-b", 1, -time.Minute, 0)), members(teamA(grp("a")).requesting(0, "a-1"))), "team-a"),
			want: Review{Waiting: mine}},
		{name: "another installation's earlier entry keeps one slot of two",
			in: installed(reviewOf(withEntries(clusterLock("db", 2), entry("team-b", 3, -time.Minute, 0)),
				members(teamA(grp("a")).requesting(0, "a-1"), teamA(grp("b")).requesting(time.Second, "b-1"))), "team-a"),
			want: Review{Holders: holders(ta), Granted: holders(ta),
				Waiting: &v1alpha1.InstallationWaiting{Installation: "team-a", Waiting: 2, Since: *at(0), RenewedAt: *at(0)}}},
		{name: "another installation's later entry: granted",
			in:   installed(reviewOf(withEntries(clusterLock("db", 1), entry("team-b", 1, time.Minute, 0)), members(teamA(grp("a")).requesting(0, "a-1"))), "team-a"),
			want: Review{Holders: holders(ta), Granted: holders(ta), Waiting: mine}},
		{name: "another installation's expired entry: granted",
			in: installed(reviewOf(withEntries(clusterLock("db", 1), entry("team-b", 1, -time.Hour, -WaitingExpiry)),
				members(teamA(grp("a")).requesting(0, "a-1"))), "team-a"),
			want: Review{Holders: holders(ta), Granted: holders(ta), Waiting: mine}},
		{name: "the installation's own entry: granted",
			in:   installed(reviewOf(withEntries(clusterLock("db", 1), entry("team-a", 1, -time.Minute, 0)), members(teamA(grp("a")).requesting(0, "a-1"))), "team-a"),
			want: Review{Holders: holders(ta), Granted: holders(ta), Waiting: mine}},
		{name: "an entry of the same since, of an installation after mine by name: granted",
			in:   installed(reviewOf(withEntries(clusterLock("db", 1), entry("team-b", 1, 0, 0)), members(teamA(grp("a")).requesting(0, "a-1"))), "team-a"),
			want: Review{Holders: holders(ta), Granted: holders(ta), Waiting: mine}},
		{name: "an entry of the same since, of an installation before mine by name: it keeps the slot",
			in:   installed(reviewOf(withEntries(clusterLock("db", 1), entry("team-0", 1, 0, 0)), members(teamA(grp("a")).requesting(0, "a-1"))), "team-a"),
			want: Review{Waiting: mine}},
	})
}

// TestDecideCount proves the waiting the review counts: the groups naming the lock with a request
// (of 0.2.0, granted or yielding too), not being deleted, in status.waitingGroups for an OaatLock
// and for an installation of all namespaces; for an installation of some namespaces reviewing a
// ClusterOaatLock, its own entry instead (the count, the oldest since, renewed now; nil when none
// waits), status.waitingGroups left as it was.
func TestDecideCount(t *testing.T) {
	full := func(l v1alpha1.Lock) v1alpha1.Lock {
		l.SetLockWaitingGroups(5)
		return l
	}
	z := holder("z", "z-1")
	tz := clusterHolder("team-a", "z", "z-1")
	waiters := func(namespace string) []Member {
		return members(
			grp("z").in(namespace).running("z-1"),
			grp("a").in(namespace).requesting(-time.Minute, "a-1"),
			grp("b").in(namespace).requesting(-time.Hour, ""),
			grp("c").in(namespace).requesting(-2*time.Hour, "c-1", "nas", "ClusterOaatLock/db"),
			grp("d").in(namespace).deleting().requesting(-3*time.Hour, "d-1"),
			grp("e").in(namespace),
		)
	}
	installed := func(in ReviewInput, installation string) ReviewInput {
		in.Installation = installation
		return in
	}
	runReviews(t, []reviewCase{
		{name: "OaatLock",
			in:   reviewOf(full(lock("nas", 1, z)), waiters("ns")),
			want: Review{Holders: holders(z), WaitingGroups: 3}},
		{name: "OaatLock, nobody waits",
			in:   reviewOf(full(lock("nas", 1, z)), members(grp("z").running("z-1"))),
			want: Review{Holders: holders(z)}},
		{name: "OaatLock, an installation of some namespaces",
			in:   installed(reviewOf(full(lock("nas", 1, z)), waiters("ns")), "ns"),
			want: Review{Holders: holders(z), WaitingGroups: 3}},
		{name: "ClusterOaatLock, an installation of all namespaces",
			in:   reviewOf(full(clusterLock("db", 1, tz)), waiters("team-a")),
			want: Review{Holders: holders(tz), WaitingGroups: 3}},
		{name: "ClusterOaatLock, an installation of some namespaces: its entry",
			in: installed(reviewOf(full(clusterLock("db", 1, tz)), waiters("team-a")), "team-a"),
			want: Review{Holders: holders(tz), WaitingGroups: 5,
				Waiting: &v1alpha1.InstallationWaiting{Installation: "team-a", Waiting: 3, Since: *at(-2 * time.Hour), RenewedAt: *at(0)}}},
		{name: "ClusterOaatLock, an installation of some namespaces, nobody waits: no entry",
			in:   installed(reviewOf(full(clusterLock("db", 1, tz)), members(grp("z").in("team-a").running("z-1"))), "team-a"),
			want: Review{Holders: holders(tz), WaitingGroups: 5}},
	})
}

// TestSortHolders proves the order a lock's status keeps its holders in: by group name, then
// namespace.
func TestSortHolders(t *testing.T) {
	got := holders(clusterHolder("team-b", "b", "b-1"), clusterHolder("team-b", "a", "a-1"), clusterHolder("team-a", "b", "b-2"))
	SortHolders(got)
	want := holders(clusterHolder("team-b", "a", "a-1"), clusterHolder("team-a", "b", "b-2"), clusterHolder("team-b", "b", "b-1"))
	if d := diff(want, got); d != "" {
		t.Fatalf("SortHolders (-want +got):\n%s", d)
	}
}
