package statusview

import (
	"strconv"
	"strings"
	"unicode"
)

// Item returns an item (or any text from the cluster) as it can be shown in a terminal table:
// as it is when every character is printable and not a tab, else quoted as Go quotes strings
// (\t, \x1b, \u202e...). Items come from users and ConfigMaps: raw, an escape sequence would
// reach the terminal and a tab would shift the table's columns.
func Item(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) < 0 {
		return s
	}
	return strconv.Quote(s)
}
