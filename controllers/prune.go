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
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// Deleting the finished pods that spec.podHistory no longer keeps cost one API write per run of a
// repeating item, a quarter of a run's writes. They are deleted together instead, in one request
// (a deletecollection of the group's pods by their run numbers), when the planner says so
// (planner.Plan.DeleteBatch).

// deleteSuperseded deletes the group's finished pods of the given runs in one request: its pods
// whose run label is one of theirs. A run number names one pod of the group.
func (r *OaatGroupReconciler) deleteSuperseded(ctx context.Context, group *v1alpha1.OaatGroup, pods []*corev1.Pod) error {
	runs := make([]string, 0, len(pods))
	for _, pod := range pods {
		runs = append(runs, strconv.FormatInt(podbuild.RunNumber(pod), 10))
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
