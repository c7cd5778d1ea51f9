package controllers

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// supersededBatch is how many superseded finished pods (beyond spec.podHistory) a busy group
// lets wait before it deletes them together.
const supersededBatch = 8

// Deleting the finished pods that spec.podHistory no longer keeps cost one API write per run of a
// repeating item, a quarter of a run's writes. They are deleted together instead, in one request
// (a deletecollection of the group's pods by their run numbers): when the group goes idle after
// this pass, or once supersededBatch of them wait. Until then a group keeps a few more finished
// pods than podHistory says; their runs are recorded already, so nothing is lost or counted twice.

// pruneNow reports whether the superseded pods of a plan are deleted in this pass: when there
// are any and the group is idle after it (no current run) or supersededBatch of them wait.
func pruneNow(superseded int, idleAfter bool) bool {
	return superseded > 0 && (idleAfter || superseded >= supersededBatch)
}

// splitDeletions separates the plan's deferrable deletions of superseded finished pods from the
// others (rogue pods, each with its event; the pods of removed items).
func splitDeletions(deletions []planner.Deletion) (superseded []*corev1.Pod, others []planner.Deletion) {
	for _, d := range deletions {
		if d.Deferrable && planner.Terminal(d.Pod) && planner.RunNumber(d.Pod) > 0 {
			superseded = append(superseded, d.Pod)
		} else {
			others = append(others, d)
		}
	}
	return superseded, others
}

// deleteSuperseded deletes the group's finished pods of the given runs in one request: its pods
// whose run label is one of theirs. A run number names one pod of the group.
func (r *OaatGroupReconciler) deleteSuperseded(ctx context.Context, group *v1alpha1.OaatGroup, pods []*corev1.Pod) error {
	runs := make([]string, 0, len(pods))
	for _, pod := range pods {
		runs = append(runs, strconv.FormatInt(planner.RunNumber(pod), 10))
	}
	ofGroup, err := labels.NewRequirement(v1alpha1.LabelGroup, selection.Equals, []string{group.Name})
	if err != nil {
		return fmt.Errorf("selecting the pods of group %s: %w", group.Name, err)
	}
	ofRuns, err := labels.NewRequirement(v1alpha1.LabelRun, selection.In, runs)
	if err != nil {
		return fmt.Errorf("selecting runs %v: %w", runs, err)
	}
	if err := r.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(group.Namespace),
		client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*ofGroup, *ofRuns)}); err != nil {
		return fmt.Errorf("deleting the superseded pods of runs %v: %w", runs, err)
	}
	return nil
}
