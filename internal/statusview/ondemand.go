package statusview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// OnDemand says which of a group's on-demand runs wait and which runs, oldest first, in the
// order the operator serves them: "2 pending (/srv/photos, item3), in progress: item1 (run-abc12)",
// the OaatRun's name after the item in progress. An OaatRun without a phase yet counts as pending:
// the operator has not seen it. Finished ones are left out; with none left, OnDemand is "".
func OnDemand(runs []v1alpha1.OaatRun) string {
	active := slices.Clone(runs)
	active = slices.DeleteFunc(active, func(r v1alpha1.OaatRun) bool { return r.Status.Phase.Finished() })
	slices.SortStableFunc(active, func(a, b v1alpha1.OaatRun) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var pending, inProgress []string
	for _, r := range active {
		if r.Status.Phase == v1alpha1.OaatRunInProgress {
			inProgress = append(inProgress, fmt.Sprintf("%s (%s)", Item(r.Spec.Item), r.Name))
		} else {
			pending = append(pending, Item(r.Spec.Item))
		}
	}
	var parts []string
	if len(pending) > 0 {
		parts = append(parts, fmt.Sprintf("%d pending (%s)", len(pending), strings.Join(pending, ", ")))
	}
	if len(inProgress) > 0 {
		parts = append(parts, "in progress: "+strings.Join(inProgress, ", "))
	}
	return strings.Join(parts, ", ")
}
