package podbuild

import "strings"

// Placeholders that Substitute replaces by the item: the current one and the one of the
// original oaat-operator.
const (
	placeholder       = "{{oaat_item}}"
	legacyPlaceholder = "%%oaat_item%%"
)

// Substitute returns s with every {{oaat_item}} and %%oaat_item%% replaced by item, for a
// container's command, args or env value. The item is inserted literally: the replacement is done
// in one pass, so placeholders inside the item are not replaced, and every $ of the item is
// doubled, so that the kubelet's $(VAR) expansion turns it back into the item instead of expanding
// it.
func Substitute(s, item string) string {
	return itemReplacer(item).Replace(s)
}

// itemReplacer returns the replacer of Substitute, which Build makes once for all the strings of
// a pod.
func itemReplacer(item string) *strings.Replacer {
	literal := escapeExpansion(item)
	return strings.NewReplacer(placeholder, literal, legacyPlaceholder, literal)
}

// escapeExpansion escapes s from the kubelet's $(VAR) expansion of command, args and env values.
func escapeExpansion(s string) string {
	return strings.ReplaceAll(s, "$", "$$")
}
