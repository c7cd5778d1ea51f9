package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// write is a status write of group g: the current run (pod name, empty for none) and items.
func write(run string, items ...v1alpha1.ItemStatus) *v1alpha1.OaatGroup {
	g := &v1alpha1.OaatGroup{ObjectMeta: metav1.ObjectMeta{Name: "g"}, Status: v1alpha1.OaatGroupStatus{Items: items}}
	if run != "" {
		g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: run[:1], PodName: run}
	}
	return g
}

func success(item, pod string, s int) v1alpha1.ItemStatus {
	t := metav1.NewTime(at(s))
	return v1alpha1.ItemStatus{Name: item, LastPodName: pod, LastSuccess: &t}
}

func TestLedger(t *testing.T) {
	l := newLedger()
	l.observe(write("", v1alpha1.ItemStatus{Name: "a"}, v1alpha1.ItemStatus{Name: "b"}))
	l.observe(write("a1", v1alpha1.ItemStatus{Name: "a"}, v1alpha1.ItemStatus{Name: "b"}))
	l.observe(write("b1", success("a", "a1", 5), v1alpha1.ItemStatus{Name: "b"})) // a1 recorded, b1 starts
	l.observe(write("b1", success("a", "a1", 5), v1alpha1.ItemStatus{Name: "b"})) // the same again: no write
	l.observe(write("", success("a", "a1", 5)))                                   // b1 ends, b removed
	l.observe(write("a2", success("a", "a1", 5)))                                 // a2 starts
	l.observe(write("", success("a", "a1", 5)))                                   // a2 withdrawn: no outcome
	l.observe(write("", success("a", "a1", 9)))                                   // a1 recorded again
	l.observe(write("a5", success("a", "a1", 9)))                                 // a5 starts
	// Missed: a5 recorded and a6 started, a6 recorded and a7 started, a7 recorded.
	l.observe(write("", success("a", "a7", 30)))
	v := l.judge([]string{"a1", "b1", "a2", "a5", "a6", "a7"})
	if len(v.twice) != 1 || v.twice[0] != "a1" {
		t.Errorf("twice = %v, want a1", v.twice)
	}
	if len(v.never) != 1 || !strings.HasPrefix(v.never[0], "a2 (its pod existed") {
		t.Errorf("never = %v, want a2, withdrawn", v.never)
	}
	if want := []string{"a5", "a6"}; !slices.Equal(v.unverified, want) {
		t.Errorf("unverified = %v, want %v (a7's outcome is in status)", v.unverified, want)
	}
	if len(v.extra) != 1 || v.removed != 1 || v.writes != 8 {
		t.Errorf("extra %v, removed %d, writes %d; want one extra, one removed, 8 writes", v.extra, v.removed, v.writes)
	}
	if n := l.podless(map[string]bool{"a1": true}); n != 1 {
		t.Errorf("podless = %d, want 1 (a2)", n)
	}
}

func life(item string, created, ended int, phase corev1.PodPhase) perfkit.PodLife {
	return perfkit.PodLife{Group: "g", Item: item, SeenCreated: at(created), SeenEnded: at(ended), Phase: phase}
}

func TestStarved(t *testing.T) {
	h := newSpecHistory()
	h.setFrequency("g", 20*time.Second, at(0))
	h.add("g", "a", at(0))
	h.add("g", "b", at(0))
	h.add("g", "c", at(0))
	h.remove("g", "c", at(5))
	h.setFrequency("g", 60*time.Second, at(50))
	pods := map[string][]perfkit.PodLife{"g": {
		life("a", 1, 5, corev1.PodSucceeded),
		life("b", 6, 10, corev1.PodFailed),
		life("b", 80, 85, corev1.PodSucceeded),   // waited 70 s after a failure: bound 10+2*5 = 20 s
		life("a", 70, 75, corev1.PodSucceeded),   // waited 65 s after a success: 60 s frequency meanwhile + 20 s
		life("a", 200, 205, corev1.PodSucceeded), // after the end
	}}
	got := h.starved(pods, at(150), 5*time.Second, 10*time.Second)
	// The bound is 10 s + 5 s for each of a, b and c; after a success the 60 s frequency counts.
	if len(got) != 1 || got[0].item != "b" || got[0].waited != 70*time.Second || got[0].allowed != 25*time.Second || got[0].still {
		t.Errorf("starved until 150 s = %v, want b waited 70 s after its failure, allowed 25 s", got)
	}
	got = h.starved(pods, at(190), 5*time.Second, 10*time.Second)
	want := []string{"g/b waited 1m10s (allowed 25s)", "g/a was still waiting after 1m55s (allowed 1m25s)", "g/b was still waiting after 1m45s (allowed 1m25s)"}
	if len(got) != len(want) {
		t.Fatalf("starved until 190 s = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("starved[%d] = %s, want %s", i, got[i], want[i])
		}
	}
}

func TestPaused(t *testing.T) {
	h := newSpecHistory()
	h.pause(at(10), at(20))
	h.pause(at(15), at(30)) // overlaps the first
	h.pause(at(50), at(60))
	if got := h.paused(at(0), at(100)); got != 30*time.Second {
		t.Errorf("paused = %v, want 30s", got)
	}
	if got := h.paused(at(25), at(55)); got != 10*time.Second {
		t.Errorf("paused in [25, 55] = %v, want 10s", got)
	}
}
