package planner

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

func TestTerminal(t *testing.T) {
	for phase, want := range map[corev1.PodPhase]bool{
		corev1.PodPending: false, corev1.PodRunning: false, corev1.PodUnknown: false, "": false,
		corev1.PodSucceeded: true, corev1.PodFailed: true,
	} {
		if got := podbuild.Terminal(&corev1.Pod{Status: corev1.PodStatus{Phase: phase}}); got != want {
			t.Errorf("podbuild.Terminal(phase %q) = %v, want %v", phase, got, want)
		}
	}
	deleting := metav1.Now()
	running := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleting}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if podbuild.Terminal(running) {
		t.Error("a running pod being deleted is terminal; its containers may still run")
	}
}

func TestRunNumber(t *testing.T) {
	for label, want := range map[string]int64{"7": 7, "0": 0, "": 0, "-3": 0, "x": 0, "99999999999999999999": 0} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelRun: label}}}
		if got := podbuild.RunNumber(pod); got != want {
			t.Errorf("podbuild.RunNumber(label %q) = %d, want %d", label, got, want)
		}
	}
	if got := podbuild.RunNumber(&corev1.Pod{}); got != 0 {
		t.Errorf("podbuild.RunNumber(no label) = %d, want 0", got)
	}
}
