package main

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestLockWatch(t *testing.T) {
	w := newLockWatch(10)
	wantNamed := map[string][]string{
		"nas": {"g-0", "g-2", "g-3", "g-8"},
		"db":  {"g-1", "g-2", "g-3", "g-9"},
	}
	for lock, want := range wantNamed {
		if got := w.named[lock]; !slices.Equal(got, want) {
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

	pod := func(name, group string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(name), Labels: map[string]string{v1alpha1.LabelGroup: group}},
			Status:     corev1.PodStatus{Phase: phase},
		}
	}
	w.observe(watch.Event{Type: watch.Added, Object: pod("a", "g-2", corev1.PodRunning)}) // both locks
	w.observe(watch.Event{Type: watch.Added, Object: pod("b", "g-1", corev1.PodRunning)}) // db
	w.observe(watch.Event{Type: watch.Added, Object: pod("c", "g-4", corev1.PodRunning)}) // none
	w.observe(watch.Event{Type: watch.Modified, Object: pod("a", "g-2", corev1.PodSucceeded)})
	w.observe(watch.Event{Type: watch.Added, Object: pod("d", "g-0", corev1.PodRunning)}) // nas
	if got := w.trackers["db"].MaxLive(namespace, "db"); got != 2 {
		t.Errorf("most live pods of db = %d, want 2", got)
	}
	if got := w.trackers["nas"].MaxLive(namespace, "nas"); got != 1 {
		t.Errorf("most live pods of nas = %d, want 1", got)
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
