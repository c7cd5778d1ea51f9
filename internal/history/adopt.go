package history

import (
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Verdict says what became of a record a group looked at.
type Verdict string

const (
	// NotPredecessor means the record is not of a group this group replaces; it is left alone.
	NotPredecessor Verdict = "NotPredecessor"
	// RecordExpired means the record expired: nothing adopted, the record deleted.
	RecordExpired Verdict = "Expired"
	// OtherType means the record is of another OaatType; nothing adopted, the record deleted.
	OtherType Verdict = "OtherType"
	// Adopted means the history of the group's items that the record holds was adopted (maybe none),
	// the record deleted.
	Adopted Verdict = "Adopted"
)

// AdoptInput is what an adoption is decided from.
type AdoptInput struct {
	// Group is the new group, with its status as last persisted.
	Group *v1alpha1.OaatGroup
	// Items are the group's items now, resolved from its spec and sources.
	Items []string
	// Record is the OaatGroupHistory of the group's namespace and name.
	Record *v1alpha1.OaatGroupHistory
	// Now is the time of the decision.
	Now time.Time
}

// Adoption is the outcome of an adoption.
type Adoption struct {
	// Verdict says what became of the record.
	Verdict Verdict
	// Items is the group's status.items with the adopted history; nil when nothing is adopted.
	Items []v1alpha1.ItemStatus
	// Adopted are the names of the items that took history, in the group's order.
	Adopted []string
	// RunCount is the group's run count after the adoption.
	RunCount int64
	// DeleteRecord says that the record is to be deleted.
	DeleteRecord bool
}

// Adopt decides what the group adopts of the record (see the package's rule). The group's
// entries that have history are never changed, so adopting the same record again changes nothing.
func Adopt(in AdoptInput) Adoption {
	g, rec := in.Group, in.Record
	out := Adoption{RunCount: g.Status.RunCount}
	switch {
	case rec == nil || rec.Namespace != g.Namespace || rec.Name != g.Name || rec.Spec.GroupUID == string(g.UID):
		out.Verdict = NotPredecessor
		return out
	case Expired(rec, in.Now):
		out.Verdict, out.DeleteRecord = RecordExpired, true
		return out
	case rec.Spec.OaatType != g.Spec.OaatType:
		out.Verdict, out.DeleteRecord = OtherType, true
		return out
	}
	out.Verdict, out.DeleteRecord = Adopted, true
	out.RunCount = max(g.Status.RunCount, rec.Spec.RunCount)

	recorded := make(map[string]*v1alpha1.ItemHistory, len(rec.Spec.Items))
	for i := range rec.Spec.Items {
		recorded[rec.Spec.Items[i].Name] = &rec.Spec.Items[i]
	}
	isItem := make(map[string]bool, len(in.Items))
	for _, item := range in.Items {
		isItem[item] = true
	}
	renamedFrom := renameSources(g.Spec.ItemRenames, isItem)

	items := append([]v1alpha1.ItemStatus(nil), g.Status.Items...)
	for _, item := range in.Items {
		h, ok := recorded[item]
		if !ok {
			h, ok = recorded[renamedFrom[item]]
		}
		if !ok {
			continue
		}
		i := indexOf(items, item)
		switch {
		case i < 0:
			items = append(items, fromHistory(item, h))
		case hasHistory(&items[i]):
			continue
		default:
			items[i] = fromHistory(item, h)
		}
		out.Adopted = append(out.Adopted, item)
	}
	if len(out.Adopted) > 0 {
		out.Items = items
	}
	return out
}

// renameSources maps each item that spec.itemRenames names as a new name to its old name, when
// the old name is not an item of the group (an item still listed keeps its own history).
func renameSources(renames []v1alpha1.ItemRename, isItem map[string]bool) map[string]string {
	from := make(map[string]string, len(renames))
	for _, r := range renames {
		if isItem[r.To] && !isItem[r.From] {
			from[r.To] = r.From
		}
	}
	return from
}

func indexOf(items []v1alpha1.ItemStatus, name string) int {
	for i := range items {
		if items[i].Name == name {
			return i
		}
	}
	return -1
}
