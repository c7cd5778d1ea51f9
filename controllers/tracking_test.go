package controllers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestExpectations: a write's expectation holds until an event shows what it wrote, or its bound
// passes: the pod of a new run until an event of that pod (of its group, by name), the removal of
// a finalizer until an event of the pod at another version, or its deletion; a new expectation
// drops those past their bound.
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
	if !e.creating(group, "g-a-1", soon) || e.creating(group, "g-b-0", soon) {
		t.Error("an event of another pod of the group satisfied the create, or another pod is awaited")
	}
	if e.creating(group, "g-a-1", t0.Add(createBound)) {
		t.Error("the create is awaited past its bound")
	}
	e.observe(pod("g-a-1", "a", "1"), false)
	if e.creating(group, "g-a-1", soon) {
		t.Error("the create is awaited after an event of its pod")
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
		if got := e.untracking(tc.pod, tc.at); got != tc.want {
			t.Errorf("%s: untracking = %v, want %v", tc.name, got, tc.want)
		}
	}
	e.observe(pod("g-a-1", "a", "5"), false)
	if !e.untracking(pod("g-a-1", "a", "5"), soon) {
		t.Error("an event of the version read before the removal satisfied it")
	}
	e.observe(pod("g-a-1", "a", "5"), true)
	if e.untracking(pod("g-a-1", "a", "5"), soon) {
		t.Error("the removal is awaited after the pod's deletion")
	}

	e.expectUntrack("c", "7", t0)
	e.expectUntrack("d", "8", t0.Add(untrackBound))
	if len(e.untracks) != 1 || !e.untracking(pod("g-d-1", "d", "8"), t0.Add(untrackBound)) {
		t.Errorf("past the bound only the new removal is kept: %v", e.untracks)
	}
	e.forget(group)
	e.expectCreate(group, "g-a-2", t0)
	e.forget(group)
	if e.creating(group, "g-a-2", soon) {
		t.Error("a deleted group's create is still awaited")
	}
}
