package podbuild

import (
	"slices"
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

// Ended is when the pod ended: the latest finishedAt of its terminated containers, or, when none
// has terminated (an init container failed), of its init containers; false when no container
// says so. Init containers end before the others start, so they date the pod's end only alone.
func Ended(pod *corev1.Pod) (time.Time, bool) {
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		var ended time.Time
		for _, cs := range statuses {
			if t := cs.State.Terminated; t != nil && t.FinishedAt.After(ended) {
				ended = t.FinishedAt.Time
			}
		}
		if !ended.IsZero() {
			return ended, true
		}
	}
	return time.Time{}, false
}

// TerminationMessage is what the pod's run handed over: the termination message of its first
// container (in the template's order) that left one, empty when none did or the pod is nil.
func TerminationMessage(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.Message != "" {
			return t.Message
		}
	}
	return ""
}

// Started reports whether a container of the pod, an init container too, has started: the kubelet
// has run it, whether it still runs or has ended. A pod not yet seen (nil) has not. A pod the
// scheduler cannot place, whose volumes cannot be mounted or whose image cannot be pulled has not.
func Started(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range statuses {
			if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
				return true
			}
		}
	}
	return false
}

// Disrupted reports whether a pod is being ended, or was, by a disruption rather than by its own
// containers: its DisruptionTarget condition is True (set by the eviction API, the scheduler's
// preemption, the taint manager and pod garbage collector of a lost node, and the kubelet's
// node-pressure eviction).
func Disrupted(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Gone reports whether the pod is deleted without a grace period (force-deleted, or never
// scheduled: the API server gives those none) and has not ended: only finalizers keep the object,
// no kubelet waits for its containers to stop, and the API server takes it as deleted.
func Gone(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0 &&
		!Terminal(pod)
}

// Tracked reports whether the pod carries the finalizer oaat.io/run-tracking.
func Tracked(pod *corev1.Pod) bool {
	return slices.Contains(pod.Finalizers, v1alpha1.FinalizerRunTracking)
}
