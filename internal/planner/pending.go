package planner

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

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
