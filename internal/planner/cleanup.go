package planner

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// deleteRoguePods deletes every live pod with the group's label that is not its current run.
// Pods already being deleted are left to finish.
func (d *decision) deleteRoguePods() {
	for _, pod := range d.pods.others {
		if podbuild.Terminal(pod) || pod.DeletionTimestamp != nil {
			continue
		}
		d.plan.Delete = append(d.plan.Delete, Deletion{Pod: pod, Event: &Event{
			Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRoguePodDeleted,
			Message: message.Event(fmt.Sprintf("Deleted pod %s: it carries the group's label but is not its current run", pod.Name)),
		}})
	}
}

// pruneHistory deletes the group's finished pods beyond spec.podHistory, the oldest runs of
// each item first, so that the logs of recent runs stay readable. Without podHistory the latest
// finished pod of each item is kept, whatever its result. The finished pods of an item that is no
// longer the group's all go, and its status entry with the last of them.
func (d *decision) pruneHistory() {
	var finished []*corev1.Pod
	for _, pod := range append([]*corev1.Pod{d.pods.current}, d.pods.others...) {
		if pod == nil || !podbuild.Terminal(pod) || !metav1.IsControlledBy(pod, d.group) {
			continue
		}
		if _, ok := pod.Annotations[v1alpha1.AnnotationItem]; ok {
			finished = append(finished, pod)
		}
	}
	slices.SortStableFunc(finished, func(a, b *corev1.Pod) int { return cmp.Compare(podbuild.RunNumber(b), podbuild.RunNumber(a)) })
	type class struct {
		item   string
		result v1alpha1.RunResult
	}
	kept := map[class]int32{}
	for _, pod := range finished {
		c := class{item: pod.Annotations[v1alpha1.AnnotationItem]}
		limit := int32(1)
		if !d.itemSet[c.item] {
			limit = 0
		}
		if h := d.group.Spec.PodHistory; h != nil && limit > 0 {
			c.result = d.endedPod(pod).result
			limit = keep(h.Failed)
			if c.result == v1alpha1.ResultSucceeded {
				limit = keep(h.Succeeded)
			}
		}
		if kept[c] < limit {
			kept[c]++
			continue
		}
		switch {
		case pod.DeletionTimestamp != nil:
		case d.itemSet[c.item] && podbuild.RunNumber(pod) > 0:
			d.superseded = append(d.superseded, pod)
		default:
			d.plan.Delete = append(d.plan.Delete, Deletion{Pod: pod})
		}
	}
}

// supersededBatch is how many superseded finished pods (beyond spec.podHistory) a busy group
// lets wait before it deletes them together.
const supersededBatch = 8

// batchSuperseded plans the deletion of the superseded finished pods together (Plan.DeleteBatch):
// now when the group is idle after this pass (no current run) or supersededBatch of them wait;
// otherwise they wait for a later pass.
func (d *decision) batchSuperseded() {
	if n := len(d.superseded); n > 0 && (d.plan.Status.CurrentRun == nil || n >= supersededBatch) {
		d.plan.DeleteBatch = d.superseded
	}
}

// keep is a podHistory count: absent means one.
func keep(count *int32) int32 {
	if count == nil {
		return 1
	}
	return *count
}
