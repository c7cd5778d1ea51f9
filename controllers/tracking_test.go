package controllers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestExpectations: a write's expectation is pending until an event shows what it wrote, or its
// bound passes: the pod of a new run until an event of that pod (of its group, by name), the
// removal of a finalizer until an event of the pod at another version, or its deletion; a new
// expectation drops those past their bound. What a pass took before it read the cache answers for
// what it read, whatever event comes during the pass.
func TestExpectations(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	group := types.NamespacedName{Namespace: "ns", Name: "g"}
	pod := func(name, uid, resourceVersion string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), ResourceVersion: resourceVersion,
			Labels: map[string]string{v1alpha1.LabelGroup: "g"}}}
	}
	soon := t0.Add(time.Second)

	var e expectations
	e.expectCreate(group, "g-a-1", t0)
	e.observe(pod("g-b-0", "x", "3"), false)
	if p := e.pending(group, soon); !p.creating("g-a-1") || p.creating("g-b-0") {
		t.Error("an event of another pod of the group satisfied the create, or another pod is awaited")
	}
	if e.pending(types.NamespacedName{Namespace: "ns", Name: "h"}, soon).creating("g-a-1") {
		t.Error("another group awaits the group's create")
	}
	if e.pending(group, t0.Add(createBound)).creating("g-a-1") {
		t.Error("the create is awaited past its bound")
	}
	before := e.pending(group, soon)
	e.observe(pod("g-a-1", "a", "1"), false)
	if e.pending(group, soon).creating("g-a-1") {
		t.Error("the create is awaited after an event of its pod")
	}
	if !before.creating("g-a-1") {
		t.Error("an event during a pass changed what the pass took before it read the cache")
	}

	e.expectUntrack("a", "5", t0)
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		at   time.Time
		want bool
	}{
		{"the cache not caught up", pod("g-a-1", "a", "5"), soon, true},
		{"the cache shows a later version", pod("g-a-1", "a", "6"), soon, false},
		{"another pod", pod("g-b-0", "b", "5"), soon, false},
		{"past its bound", pod("g-a-1", "a", "5"), t0.Add(untrackBound), false},
	} {
		if got := e.pending(group, tc.at).untracking(tc.pod); got != tc.want {
			t.Errorf("%s: untracking = %v, want %v", tc.name, got, tc.want)
		}
	}
	e.observe(pod("g-a-1", "a", "5"), false)
	if !e.pending(group, soon).untracking(pod("g-a-1", "a", "5")) {
		t.Error("an event of the version read before the removal satisfied it")
	}
	// A pass took what was pending, then read the pod before the watch brought its patch; the
	// patched pod's event comes before the pass asks: the pass must not patch it again.
	before = e.pending(group, soon)
	e.observe(pod("g-a-1", "a", "6"), false)
	if !before.untracking(pod("g-a-1", "a", "5")) {
		t.Error("an event during a pass made it patch again the pod it read before the event")
	}
	if e.pending(group, soon).untracking(pod("g-a-1", "a", "5")) {
		t.Error("the removal is awaited after an event of the patched pod")
	}
	e.expectUntrack("a", "5", t0)
	e.observe(pod("g-a-1", "a", "5"), true)
	if e.pending(group, soon).untracking(pod("g-a-1", "a", "5")) {
		t.Error("the removal is awaited after the pod's deletion")
	}

	e.expectUntrack("c", "7", t0)
	e.expectUntrack("d", "8", t0.Add(untrackBound))
	if len(e.untracks) != 1 || !e.pending(group, t0.Add(untrackBound)).untracking(pod("g-d-1", "d", "8")) {
		t.Errorf("past the bound only the new removal is kept: %v", e.untracks)
	}
	e.forget(group)
	e.expectCreate(group, "g-a-2", t0)
	e.forget(group)
	if e.pending(group, soon).creating("g-a-2") {
		t.Error("a deleted group's create is still awaited")
	}
}
