package main

import (
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// pod is a succeeded pod of group g seen from created to ended (ms after t0), finished at the
// whole second before it was seen to end, as kwok stamps it.
func pod(name, item string, created, ended int) perfkit.PodLife {
	return perfkit.PodLife{
		Namespace: "ns", Name: name, Group: "g", Item: item,
		SeenCreated: at(created), SeenEnded: at(ended), FinishedAt: at(ended).Truncate(time.Second),
		Phase: corev1.PodSucceeded,
	}
}

func TestMeasureStarts(t *testing.T) {
	freq := 10 * time.Second
	pods := []perfkit.PodLife{
		pod("a1", "a", 0, 2300),
		pod("b1", "b", 2320, 4500),     // reaction 20 ms
		pod("a2", "a", 12050, 14600),   // a eligible at 2 s + 10 s: precision 50 ms
		pod("b2", "b", 14700, 16000),   // b eligible at 14 s, before a2 ended: reaction 100 ms
		pod("a3", "a", 20000, 22000),   // a eligible at 24 s: early
		pod("b3", "b", 21000, 23000),   // a3 still live when b3 came: early
		pod("c1", "c", 100000, 101000), // trigger (b3's end) after the window: no sample
	}
	got := measureStarts(map[string][]perfkit.PodLife{"g": pods}, freq, window{from: t0, to: at(20000)})
	if len(got.reaction) != 2 || got.reaction[0] != 20*time.Millisecond || got.reaction[1] != 100*time.Millisecond {
		t.Errorf("reaction = %v, want [20ms 100ms]", got.reaction)
	}
	if len(got.precision) != 1 || got.precision[0] != 50*time.Millisecond {
		t.Errorf("precision = %v, want [50ms]", got.precision)
	}
	if len(got.early) != 2 || !strings.Contains(got.early[0], "ns/a3") || !strings.Contains(got.early[1], "ns/b3") {
		t.Errorf("early = %v, want a3 and b3", got.early)
	}
	if n := endedIn(pods, window{from: at(2000), to: at(16000)}); n != 3 {
		t.Errorf("endedIn = %d, want 3 (a1, b1, a2)", n)
	}
}

func TestDueGroups(t *testing.T) {
	byGroup := map[string][]perfkit.PodLife{
		"g-0": {pod("a", "item-0", 0, 1000), pod("b", "item-1", 1000, 2000)},
		"g-1": {pod("c", "item-0", 0, 1000)},
	}
	failed := pod("d", "item-0", 0, 1000)
	failed.Phase = corev1.PodFailed
	byGroup["g-2"] = []perfkit.PodLife{failed}
	due := dueGroups(byGroup, 4, 1, time.Hour, at(5000))
	// g-2 failed (due since its pod ended), g-3 never ran (due since ever); g-0 and g-1 succeeded.
	want := map[string]time.Time{"g-2": at(1000), "g-3": {}}
	if !maps.EqualFunc(due, want, time.Time.Equal) {
		t.Errorf("dueGroups = %v, want %v", due, want)
	}
}

func TestScheduledAt(t *testing.T) {
	if got, ok := scheduledAt("cj-3-29920838"); !ok || !got.Equal(time.Unix(29920838*60, 0)) {
		t.Errorf("scheduledAt = %v, %v", got, ok)
	}
	if _, ok := scheduledAt("nodash"); ok {
		t.Error("scheduledAt of a name without a time")
	}
}
