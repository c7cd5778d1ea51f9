package planner

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// deleteRoguePods deletes every live pod with the group's label that is not its current run.
// Pods already being deleted are left to finish.
func (d *decision) deleteRoguePods() {
	for _, pod := range d.pods.others {
		if terminal(pod) || pod.DeletionTimestamp != nil {
			continue
		}
		d.plan.Delete = append(d.plan.Delete, Deletion{Pod: pod, Event: &Event{
			Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRoguePodDeleted,
			Message: fmt.Sprintf("Deleted pod %s: it carries the group's label but is not its current run", pod.Name),
		}})
	}
}

// pruneHistory deletes the group's finished pods beyond spec.podHistory, the oldest runs of
// each item first, so that the logs of recent runs stay readable. Without podHistory the latest
// finished pod of each item is kept, whatever its result.
func (d *decision) pruneHistory() {
	var finished []*corev1.Pod
	for _, pod := range append([]*corev1.Pod{d.pods.current}, d.pods.others...) {
		if pod == nil || !terminal(pod) || !metav1.IsControlledBy(pod, d.group) {
			continue
		}
		if _, ok := pod.Annotations[v1alpha1.AnnotationItem]; ok {
			finished = append(finished, pod)
		}
	}
	slices.SortStableFunc(finished, func(a, b *corev1.Pod) int { return cmp.Compare(RunNumber(b), RunNumber(a)) })
	type class struct {
		item   string
		result Result
	}
	kept := map[class]int32{}
	for _, pod := range finished {
		c := class{item: pod.Annotations[v1alpha1.AnnotationItem]}
		limit := int32(1)
		if h := d.group.Spec.PodHistory; h != nil {
			c.result = d.endedPod(pod).result
			limit = keep(h.Failed)
			if c.result == ResultSucceeded {
				limit = keep(h.Succeeded)
			}
		}
		if kept[c] < limit {
			kept[c]++
			continue
		}
		if pod.DeletionTimestamp == nil {
			d.plan.Delete = append(d.plan.Delete, Deletion{Pod: pod})
		}
	}
}

// keep is a podHistory count: absent means one.
func keep(count *int32) int32 {
	if count == nil {
		return 1
	}
	return *count
}

// syncItems lists the items of the spec in its order, keeping their history, and drops the
// history of items no longer in the spec unless they are running now.
func (d *decision) syncItems() {
	st := &d.plan.Status
	byName := make(map[string]v1alpha1.ItemStatus, len(st.Items))
	for _, it := range st.Items {
		byName[it.Name] = it
	}
	items := make([]v1alpha1.ItemStatus, 0, len(d.group.Spec.OaatItems))
	inSpec := make(map[string]bool, len(d.group.Spec.OaatItems))
	for _, name := range d.group.Spec.OaatItems {
		if inSpec[name] {
			continue
		}
		inSpec[name] = true
		it, ok := byName[name]
		if !ok {
			it = v1alpha1.ItemStatus{Name: name}
		}
		items = append(items, it)
	}
	if cr := st.CurrentRun; cr != nil && !inSpec[cr.Item] {
		if it, ok := byName[cr.Item]; ok {
			items = append(items, it)
		}
	}
	st.Items = items
}
