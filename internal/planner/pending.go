package planner

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

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

// waitingFor says what a pod that has not started waits for, as its status tells: the reason and
// message of its PodScheduled condition when it is not scheduled, else the reasons its containers
// wait (ContainerCreating, ImagePullBackOff...), else that its status says nothing yet.
func waitingFor(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return strings.TrimSpace("not scheduled: " + c.Reason + " " + c.Message)
		}
	}
	var reasons []string
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range statuses {
			if w := s.State.Waiting; w != nil && w.Reason != "" {
				reasons = append(reasons, s.Name+": "+w.Reason)
			}
		}
	}
	if len(reasons) == 0 {
		return "its status names no reason"
	}
	return "waiting: " + strings.Join(reasons, ", ")
}
