package main

import (
	"strings"
	"testing"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// first is the first pod of group g, seen ms after t0.
func first(g string, ms int) perfkit.PodLife {
	return perfkit.PodLife{Namespace: "ns", Name: g + "-pod", Group: g, SeenCreated: at(ms)}
}

func TestMeasureTick(t *testing.T) {
	tick := at(60_000)
	pods := []perfkit.PodLife{
		first("old", 1_000), // before from: a pod of an earlier round, not counted
		first("a", 60_100),
		first("a", 61_000), // a's second pod: not its first
		first("b", 60_900),
		first("c", 61_200),
		first("d", 64_500),   // round start 64 s: on time
		first("e", 62_000),   // round start 63 s: early
		first("old", 70_000), // its first pod after from
	}
	roundStart := map[string]time.Time{"d": at(64_000), "e": at(63_000)}
	got := measureTick(pods, []string{"a", "b", "c", "d", "e", "old", "none"}, tick, at(10_000), roundStart)
	if got.missing != 1 {
		t.Errorf("missing = %d, want 1 (none)", got.missing)
	}
	want := perfkit.Latencies{100 * time.Millisecond, 900 * time.Millisecond, 1200 * time.Millisecond, 4500 * time.Millisecond, 2 * time.Second, 10 * time.Second}
	if len(got.fromTick) != len(want) {
		t.Fatalf("fromTick = %v, want %v", got.fromTick, want)
	}
	for i := range want {
		if got.fromTick[i] != want[i] {
			t.Errorf("fromTick[%d] = %v, want %v", i, got.fromTick[i], want[i])
		}
	}
	if got.fromRound[3] != 500*time.Millisecond || got.fromRound[4] != -time.Second {
		t.Errorf("fromRound = %v: d 500ms and e -1s after their rounds", got.fromRound)
	}
	if got.busiest != 2 || got.busiestSecond != 0 {
		t.Errorf("busiest = %d at second %d, want 2 at 0 (a and b)", got.busiest, got.busiestSecond)
	}
	if len(got.early) != 1 || !strings.HasPrefix(got.early[0], "ns/e-pod") {
		t.Errorf("early = %v, want e's pod", got.early)
	}
	if got.spread() != 9900*time.Millisecond {
		t.Errorf("spread = %v, want 9.9s", got.spread())
	}
	if s := got.summary(); !strings.Contains(s, "p0 100 ms") || !strings.Contains(s, "max 10000 ms") ||
		!strings.Contains(s, "at most 2 first pods in one second (second 0 after the tick); 6 groups started, 1 did not") {
		t.Errorf("summary = %q", s)
	}
}

func TestMeasureTickSecondBeforeTick(t *testing.T) {
	got := measureTick([]perfkit.PodLife{first("a", 59_500), first("b", 59_900)}, []string{"a", "b"}, at(60_000), t0, nil)
	if got.busiest != 2 || got.busiestSecond != -1 {
		t.Errorf("busiest = %d at %d, want 2 at -1", got.busiest, got.busiestSecond)
	}
	if len(got.early) != 2 {
		t.Errorf("early = %v: both before the tick", got.early)
	}
}

func TestNextMinuteAndDailyAt(t *testing.T) {
	if got := nextMinute(time.Date(2030, 1, 1, 23, 59, 0, 1, time.UTC)); !got.Equal(time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("nextMinute = %v", got)
	}
	whole := time.Date(2030, 1, 1, 7, 5, 0, 0, time.UTC)
	if got := nextMinute(whole); !got.Equal(whole) {
		t.Errorf("nextMinute of a whole minute = %v", got)
	}
	if got := dailyAt(whole.In(time.FixedZone("UTC+1", 3600))); got != "5 7 * * *" {
		t.Errorf("dailyAt = %q, want UTC's 5 7 * * *", got)
	}
}

func TestOperatorWrites(t *testing.T) {
	api := perfkit.Requests{
		{Verb: "PUT", Group: "oaat.io", Resource: "oaatgroups", Subresource: "status"}:              30,
		{Verb: "PUT", Group: "oaat.io", Resource: "oaatlocks", Subresource: "status"}:               20,
		{Verb: "PUT", Group: "oaat.io", Resource: "oaatlocks", Subresource: "status", Failed: true}: 5,
		{Verb: "POST", Resource: "pods"}:                           10,
		{Verb: "DELETE", Resource: "pods"}:                         8,
		{Verb: "PATCH", Resource: "pods"}:                          9,
		{Verb: "POST", Resource: "pods", Subresource: "binding"}:   10,
		{Verb: "POST", Group: "events.k8s.io", Resource: "events"}: 20,
		{Verb: "PATCH", Resource: "pods", Subresource: "status"}:   20,
	}
	w := operatorWrites(api).perRun(10)
	if w != (opWrites{groupStatus: 3, lockStatus: 2, podCreate: 1, podPatch: 0.9, podDelete: 0.8, events: 1}) {
		t.Errorf("per run = %+v", w)
	}
	base := opWrites{groupStatus: 1, podCreate: 1, podPatch: 0.9, podDelete: 0.8, events: 1}
	if got := w.minus(base).signed(); got != "+4.00 = group status +2.00, lock status +2.00, pod create +0.00, pod finalizer +0.00, pod delete +0.00, events +0.00" {
		t.Errorf("signed = %q", got)
	}
	if got := base.String(); got != "4.70 = group status 1.00, lock status 0.00, pod create 1.00, pod finalizer 0.90, pod delete 0.80, events 1.00" {
		t.Errorf("String = %q", got)
	}
}

func TestWorkloadRequestsKeepReadsAndLeaseReads(t *testing.T) {
	for key, want := range map[perfkit.RequestKey]bool{
		{Verb: "LIST", Resource: "pods"}:                                               true,
		{Verb: "GET", Group: "coordination.k8s.io", Resource: "leases"}:                true,
		{Verb: "PUT", Group: "coordination.k8s.io", Resource: "leases"}:                false,
		{Verb: "PATCH", Resource: "nodes", Subresource: "status"}:                      false,
		{Verb: "PATCH", Resource: "pods"}:                                              true,
		{Verb: "PATCH", Resource: "pods", Failed: true}:                                false,
		{Verb: "POST", Group: "oaat.io", Resource: "oaatgroups"}:                       false,
		{Verb: "PUT", Group: "oaat.io", Resource: "oaatgroups", Subresource: "status"}: true,
	} {
		if got := workloadRequests(key); got != want {
			t.Errorf("workloadRequests(%s) = %v, want %v", key, got, want)
		}
	}
}
