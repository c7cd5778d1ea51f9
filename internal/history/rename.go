package history

import (
	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// RenameInput is what the renames of a group's items are decided from.
type RenameInput struct {
	// Items is the group's status.items.
	Items []v1alpha1.ItemStatus
	// ItemNames are the group's items now, resolved from its spec and sources.
	ItemNames []string
	// Renames is the group's spec.itemRenames.
	Renames []v1alpha1.ItemRename
	// Running is the item of the group's current run, empty when none runs.
	Running string
}

// Rename returns the group's status.items with the renames applied, and the renames applied. A
// rename applies when its to is an item of the group whose entry has no history, its from is not
// an item of the group, has history and is not running (its run is recorded under its old name
// first): the entry of from becomes that of to, with all of from's status. Applied once, a rename
// finds no entry of from any more and changes nothing.
func Rename(in RenameInput) ([]v1alpha1.ItemStatus, []v1alpha1.ItemRename) {
	isItem := make(map[string]bool, len(in.ItemNames))
	for _, item := range in.ItemNames {
		isItem[item] = true
	}
	items := in.Items
	var applied []v1alpha1.ItemRename
	sources := renameSources(in.Renames, isItem)
	for _, r := range in.Renames {
		from, to := sources[r.To], r.To
		if from == "" {
			continue
		}
		src := indexOf(items, from)
		if src < 0 || from == in.Running || !hasHistory(&items[src]) {
			continue
		}
		if dst := indexOf(items, to); dst >= 0 && hasHistory(&items[dst]) {
			continue
		}
		if len(applied) == 0 {
			items = append([]v1alpha1.ItemStatus(nil), items...)
		}
		moved := *items[src].DeepCopy()
		moved.Name = to
		items = append(items[:src], items[src+1:]...)
		if dst := indexOf(items, to); dst >= 0 {
			items[dst] = moved
		} else {
			items = append(items, moved)
		}
		applied = append(applied, v1alpha1.ItemRename{From: from, To: to})
	}
	return items, applied
}
