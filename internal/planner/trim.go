package planner

import (
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// trimmedLabels and trimmedAnnotations are the keys of the labels and annotations Trim keeps: the
// operator's own, which the cache's selectors, the watch's mapping to groups and the planner read
// (the item label and the OaatRun annotation name what a pod runs, for whoever reads it).
var (
	trimmedLabels      = []string{v1alpha1.LabelGroup, v1alpha1.LabelItem, v1alpha1.LabelRun}
	trimmedAnnotations = []string{v1alpha1.AnnotationItem, v1alpha1.AnnotationOaatRun}
)

// Trim is what the manager's cache keeps of a pod: what the planner and the controllers read,
// nothing else (a thousand groups keep ten thousand pods). Of the metadata: the name, namespace,
// UID and resourceVersion (the untracking and deletion preconditions), the creation and deletion
// timestamps and the deletion's grace period (Gone), the operator's labels and annotations
// (trimmedLabels, trimmedAnnotations; a template's own are not kept), the controller reference
// (IsControlledBy) and the finalizers (Tracked). Of the status: the phase, reason, message and
// start time (the outcome of a run), the conditions PodScheduled (what a pending pod waits for)
// and DisruptionTarget (Disrupted), and of each container and init container its name and state:
// waiting with its reason, running, terminated with its exit code, reason, finish time (Started,
// the outcome, the exit code policy) and termination message cut to what a verification gets
// (MaxSourceResult: status.pendingVerification.result), and whether it terminated before
// (Started). The
// spec is dropped: the operator reads its pods' specs only from the API server (placement). The
// strings that pods share (the namespace, keys, the group's name and UID, reasons...) are
// interned: each decoded pod brings its own copies. TestTrimKeepsDecisions holds the planner to
// it.
func Trim(pod *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: intern(pod.Namespace), UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			CreationTimestamp: pod.CreationTimestamp, DeletionTimestamp: pod.DeletionTimestamp,
			DeletionGracePeriodSeconds: pod.DeletionGracePeriodSeconds,
			Labels:                     keepKeys(pod.Labels, trimmedLabels), Annotations: keepKeys(pod.Annotations, trimmedAnnotations),
			OwnerReferences: controllerOnly(pod.OwnerReferences), Finalizers: internAll(pod.Finalizers),
		},
		Status: corev1.PodStatus{
			Phase: intern(pod.Status.Phase), Reason: intern(pod.Status.Reason), Message: intern(pod.Status.Message),
			StartTime:             pod.Status.StartTime,
			Conditions:            readConditions(pod.Status.Conditions),
			InitContainerStatuses: trimContainers(pod.Status.InitContainerStatuses),
			ContainerStatuses:     trimContainers(pod.Status.ContainerStatuses),
		},
	}
}

// intern is the canonical copy of s, shared by every pod that holds the same string.
func intern[S ~string](s S) S {
	if s == "" {
		return s
	}
	return S(unique.Make(string(s)).Value())
}

func internAll(list []string) []string {
	if list == nil {
		return nil
	}
	kept := make([]string, len(list))
	for i, s := range list {
		kept[i] = intern(s)
	}
	return kept
}

// keepKeys is the entries of m under keys, nil when there are none.
func keepKeys(m map[string]string, keys []string) map[string]string {
	var kept map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if kept == nil {
				kept = make(map[string]string, len(keys))
			}
			kept[k] = intern(v)
		}
	}
	return kept
}

// controllerOnly is the controller reference among refs, the only one IsControlledBy reads.
func controllerOnly(refs []metav1.OwnerReference) []metav1.OwnerReference {
	for _, ref := range refs {
		if ref.Controller != nil && *ref.Controller {
			return []metav1.OwnerReference{{
				APIVersion: intern(ref.APIVersion), Kind: intern(ref.Kind), Name: intern(ref.Name), UID: intern(ref.UID),
				Controller: ref.Controller, BlockOwnerDeletion: ref.BlockOwnerDeletion,
			}}
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
			kept = append(kept, corev1.PodCondition{
				Type: intern(c.Type), Status: intern(c.Status), Reason: intern(c.Reason), Message: intern(c.Message),
			})
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
		kept[i] = corev1.ContainerStatus{Name: intern(s.Name), State: trimState(s.State)}
		if s.LastTerminationState.Terminated != nil {
			kept[i].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
		}
	}
	return kept
}

func trimState(s corev1.ContainerState) corev1.ContainerState {
	var kept corev1.ContainerState
	if s.Waiting != nil {
		kept.Waiting = &corev1.ContainerStateWaiting{Reason: intern(s.Waiting.Reason)}
	}
	if s.Running != nil {
		kept.Running = &corev1.ContainerStateRunning{}
	}
	if t := s.Terminated; t != nil {
		kept.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: intern(t.Reason), FinishedAt: t.FinishedAt,
			Message: message.Truncate(t.Message, v1alpha1.MaxSourceResult)}
	}
	return kept
}
