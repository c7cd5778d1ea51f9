package podbuild

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestTerminal(t *testing.T) {
	for phase, want := range map[corev1.PodPhase]bool{
		corev1.PodPending: false, corev1.PodRunning: false, corev1.PodUnknown: false, "": false,
		corev1.PodSucceeded: true, corev1.PodFailed: true,
	} {
		if got := Terminal(&corev1.Pod{Status: corev1.PodStatus{Phase: phase}}); got != want {
			t.Errorf("Terminal(phase %q) = %v, want %v", phase, got, want)
		}
	}
	deleting := metav1.Now()
	running := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleting}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if Terminal(running) {
		t.Error("a running pod being deleted is terminal; its containers may still run")
	}
}

func TestRunNumber(t *testing.T) {
	for label, want := range map[string]int64{"7": 7, "0": 0, "": 0, "-3": 0, "x": 0, "99999999999999999999": 0} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelRun: label}}}
		if got := RunNumber(pod); got != want {
			t.Errorf("RunNumber(label %q) = %d, want %d", label, got, want)
		}
	}
	if got := RunNumber(&corev1.Pod{}); got != 0 {
		t.Errorf("RunNumber(no label) = %d, want 0", got)
	}
}

func TestEnded(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	terminated := func(name string, at time.Duration) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(at))}}}
	}
	running := corev1.ContainerStatus{Name: "sidecar", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	for _, tc := range []struct {
		name      string
		init, all []corev1.ContainerStatus
		want      time.Time
	}{
		{name: "no status"},
		{name: "nothing terminated", all: []corev1.ContainerStatus{running}},
		{name: "the last container's end", all: []corev1.ContainerStatus{terminated("main", 9*time.Second), running, terminated("other", 5*time.Second)},
			want: t0.Add(9 * time.Second)},
		{name: "an init container that failed", init: []corev1.ContainerStatus{terminated("prepare", 2*time.Second)}, want: t0.Add(2 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{InitContainerStatuses: tc.init, ContainerStatuses: tc.all}}
			got, ok := Ended(pod)
			if !got.Equal(tc.want) || ok == tc.want.IsZero() {
				t.Errorf("Ended = %v, %v; want %v, %v", got, ok, tc.want, !tc.want.IsZero())
			}
		})
	}
}

func TestDisrupted(t *testing.T) {
	for name, tc := range map[string]struct {
		conditions []corev1.PodCondition
		want       bool
	}{
		"no conditions":            {},
		"other conditions only":    {conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		"DisruptionTarget True":    {conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}, {Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}, want: true},
		"DisruptionTarget False":   {conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse}}},
		"DisruptionTarget Unknown": {conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionUnknown}}},
	} {
		if got := Disrupted(&corev1.Pod{Status: corev1.PodStatus{Conditions: tc.conditions}}); got != tc.want {
			t.Errorf("Disrupted(%s) = %v, want %v", name, got, tc.want)
		}
	}
}

func TestGone(t *testing.T) {
	deleting := metav1.Now()
	zero, thirty := int64(0), int64(30)
	for name, tc := range map[string]struct {
		deletion *metav1.Time
		grace    *int64
		phase    corev1.PodPhase
		want     bool
	}{
		"not deleted":                         {phase: corev1.PodRunning},
		"deleted with a grace period":         {deletion: &deleting, grace: &thirty, phase: corev1.PodRunning},
		"deleted without a grace period":      {deletion: &deleting, grace: &zero, phase: corev1.PodRunning, want: true},
		"never scheduled, deleted at once":    {deletion: &deleting, grace: &zero, phase: corev1.PodPending, want: true},
		"ended, then deleted without a grace": {deletion: &deleting, grace: &zero, phase: corev1.PodFailed},
	} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: tc.deletion, DeletionGracePeriodSeconds: tc.grace},
			Status:     corev1.PodStatus{Phase: tc.phase},
		}
		if got := Gone(pod); got != tc.want {
			t.Errorf("Gone(%s) = %v, want %v", name, got, tc.want)
		}
	}
}

func TestTracked(t *testing.T) {
	for name, tc := range map[string]struct {
		finalizers []string
		want       bool
	}{
		"no finalizers":        {},
		"other finalizers":     {finalizers: []string{"example.com/other"}},
		"the tracking one too": {finalizers: []string{"example.com/other", v1alpha1.FinalizerRunTracking}, want: true},
	} {
		if got := Tracked(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Finalizers: tc.finalizers}}); got != tc.want {
			t.Errorf("Tracked(%s) = %v, want %v", name, got, tc.want)
		}
	}
}
