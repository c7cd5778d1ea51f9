package planner

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Trim is what the manager's cache keeps of a pod: what the planner and the controllers read,
// nothing else (a thousand groups keep ten thousand pods). Of the metadata: the name, namespace,
// UID and resourceVersion (the untracking and deletion preconditions), the creation and deletion
// timestamps and the deletion's grace period (Gone), the labels and annotations of the operator
// (oaat.io/..., which the cache's selectors and the planner read; a template's own are not), the
// controller reference (IsControlledBy) and the finalizers (Tracked). Of the status: the phase,
// reason, message and start time (the outcome of a run), the conditions PodScheduled (what a
// pending pod waits for) and DisruptionTarget (Disrupted), and of each container and init
// container its name and state: waiting with its reason, running, terminated with its exit code,
// reason and finish time (Started, the outcome, the exit code policy), and whether it terminated
// before (Started). The spec is dropped: the operator reads its pods' specs only from the API
// server (placement). TestTrimKeepsDecisions holds the planner to it.
func Trim(pod *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			CreationTimestamp: pod.CreationTimestamp, DeletionTimestamp: pod.DeletionTimestamp,
			DeletionGracePeriodSeconds: pod.DeletionGracePeriodSeconds,
			Labels:                     operatorKeys(pod.Labels), Annotations: operatorKeys(pod.Annotations),
			OwnerReferences: controllerOnly(pod.OwnerReferences), Finalizers: pod.Finalizers,
		},
		Status: corev1.PodStatus{
			Phase: pod.Status.Phase, Reason: pod.Status.Reason, Message: pod.Status.Message, StartTime: pod.Status.StartTime,
			Conditions:            readConditions(pod.Status.Conditions),
			InitContainerStatuses: trimContainers(pod.Status.InitContainerStatuses),
			ContainerStatuses:     trimContainers(pod.Status.ContainerStatuses),
		},
	}
}

// operatorKeys are the entries of labels or annotations whose key is the operator's (oaat.io/...).
func operatorKeys(m map[string]string) map[string]string {
	var kept map[string]string
	for k, v := range m {
		if strings.HasPrefix(k, "oaat.io/") {
			if kept == nil {
				kept = map[string]string{}
			}
			kept[k] = v
		}
	}
	return kept
}

// controllerOnly is the controller reference among refs, the only one IsControlledBy reads.
func controllerOnly(refs []metav1.OwnerReference) []metav1.OwnerReference {
	for _, ref := range refs {
		if ref.Controller != nil && *ref.Controller {
			return []metav1.OwnerReference{ref}
		}
	}
	return nil
}

// readConditions are the conditions the planner reads (waitingFor, Disrupted), without their
// times.
func readConditions(conditions []corev1.PodCondition) []corev1.PodCondition {
	var kept []corev1.PodCondition
	for _, c := range conditions {
		if c.Type == corev1.PodScheduled || c.Type == corev1.DisruptionTarget {
			kept = append(kept, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	return kept
}

// trimContainers keeps of each container status what Started, waitingFor and the outcome read.
func trimContainers(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	if statuses == nil {
		return nil
	}
	kept := make([]corev1.ContainerStatus, len(statuses))
	for i, s := range statuses {
		kept[i] = corev1.ContainerStatus{Name: s.Name, State: trimState(s.State)}
		if s.LastTerminationState.Terminated != nil {
			kept[i].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
		}
	}
	return kept
}

func trimState(s corev1.ContainerState) corev1.ContainerState {
	var kept corev1.ContainerState
	if s.Waiting != nil {
		kept.Waiting = &corev1.ContainerStateWaiting{Reason: s.Waiting.Reason}
	}
	if s.Running != nil {
		kept.Running = &corev1.ContainerStateRunning{}
	}
	if t := s.Terminated; t != nil {
		kept.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: t.Reason, FinishedAt: t.FinishedAt}
	}
	return kept
}
