package podbuild

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// The facts of an item pod, read the same way by the planner, the queue priority, the controllers
// and the forecast.

// Terminal reports whether the pod has ended: phase Succeeded or Failed. A pod being deleted that
// has not ended is live: its containers may still run.
func Terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// RunNumber is the run number of a pod (its oaat.io/run label), zero when its label is missing or
// malformed.
func RunNumber(pod *corev1.Pod) int64 {
	n, err := strconv.ParseInt(pod.Labels[v1alpha1.LabelRun], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Ended is when the pod ended: the latest finishedAt of its terminated containers, init
// containers included; false when no container says so.
func Ended(pod *corev1.Pod) (time.Time, bool) {
	var ended time.Time
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if t := cs.State.Terminated; t != nil && t.FinishedAt.After(ended) {
				ended = t.FinishedAt.Time
			}
		}
	}
	return ended, !ended.IsZero()
}
