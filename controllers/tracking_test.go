package controllers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestUntrackedPodsSkipsOnlyTheVersionReadBeforeTheRemoval(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	pod := func(uid, resourceVersion string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), ResourceVersion: resourceVersion}}
	}
	var u untrackedPods
	if u.pending(pod("a", "5"), t0) {
		t.Fatal("a pod never untracked is pending")
	}
	u.untracked("a", "5", t0)
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		at   time.Time
		want bool
	}{
		{"the cache not caught up", pod("a", "5"), t0.Add(time.Second), true},
		{"the cache shows a later version", pod("a", "6"), t0.Add(time.Second), false},
		{"another pod", pod("b", "5"), t0.Add(time.Second), false},
		{"the hint expired", pod("a", "5"), t0.Add(untrackedHintTTL), false},
	} {
		if got := u.pending(tc.pod, tc.at); got != tc.want {
			t.Errorf("%s: pending = %v, want %v", tc.name, got, tc.want)
		}
	}
	u.untracked("b", "7", t0.Add(untrackedHintTTL))
	if len(u.removed.at) != 1 || !u.pending(pod("b", "7"), t0.Add(untrackedHintTTL)) {
		t.Errorf("after the TTL only the new removal is remembered: %v", u.removed.at)
	}
}
