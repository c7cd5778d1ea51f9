package planner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// carryHistory brings history to the group's items from elsewhere: from the record of a deleted
// group of the same namespace and name (Input.History, package history's rule), then from the
// items they were renamed from (spec.itemRenames). It runs before syncItems, which drops the
// entries of items that are no longer the group's.
func (d *decision) carryHistory() {
	st := &d.plan.Status
	if rec := d.in.History; rec != nil {
		current := *d.group
		current.Status = *st
		a := history.Adopt(history.AdoptInput{Group: &current, Items: d.items, Record: rec, Now: d.in.Now})
		if a.Items != nil {
			st.Items = a.Items
		}
		st.RunCount = a.RunCount
		if a.DeleteRecord {
			d.plan.DeleteHistory = rec
		}
		switch {
		case len(a.Adopted) > 0:
			d.event(corev1.EventTypeNormal, v1alpha1.ReasonHistoryAdopted, fmt.Sprintf(
				"Adopted the history of %d items from OaatGroupHistory %s, left by the group deleted at %s: %s",
				len(a.Adopted), rec.Name, rec.Spec.DeletedAt.UTC().Format("2006-01-02T15:04:05Z"), message.List(a.Adopted, ", ")))
		case a.Verdict == history.RecordExpired:
			d.event(corev1.EventTypeNormal, v1alpha1.ReasonHistoryDiscarded, fmt.Sprintf(
				"Adopted nothing from OaatGroupHistory %s: it expired at %s", rec.Name, rec.Spec.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z")))
		case a.Verdict == history.OtherType:
			d.event(corev1.EventTypeNormal, v1alpha1.ReasonHistoryDiscarded, fmt.Sprintf(
				"Adopted nothing from OaatGroupHistory %s: it is the history of OaatType %s, not %s", rec.Name, rec.Spec.OaatType, d.group.Spec.OaatType))
		}
	}
	running := ""
	if st.CurrentRun != nil {
		running = st.CurrentRun.Item
	}
	items, applied := history.Rename(history.RenameInput{Items: st.Items, ItemNames: d.items, Renames: d.group.Spec.ItemRenames, Running: running})
	st.Items = items
	for _, r := range applied {
		d.event(corev1.EventTypeNormal, v1alpha1.ReasonItemRenamed, fmt.Sprintf("Item %s took the history of %s, which it was renamed from", r.To, r.From))
	}
}
