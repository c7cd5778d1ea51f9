// Package message bounds the human-readable text the operator writes into the cluster: condition
// messages, event notes and the messages of OaatRuns. The API server refuses a whole status write
// whose condition message is longer than the CRD allows (32768 characters) and an event whose
// note is longer than 1 KiB, so every such text is built or cut here, never left to grow with the
// data it reports (the lines of a ConfigMap, a pod's status message, an error).
package message

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits, in bytes (a character is at least one byte, so a limit in bytes holds for the API
// server's limits in characters too).
const (
	// MaxCondition is the longest message of a condition, well under the CRD's 32768 characters,
	// so that a status with several conditions stays small.
	MaxCondition = 4096
	// MaxOnDemandRun is the longest message of an OaatRun's status.
	MaxOnDemandRun = 4096
	// MaxEvent is the longest note of an event: events.k8s.io/v1 refuses notes over 1 KiB.
	MaxEvent = 1024
	// MaxListed is how many entries List spells out before it counts the rest.
	MaxListed = 5
)

// ellipsis ends a text that was cut.
const ellipsis = "…"

// List joins the first MaxListed entries with sep and counts the others ("and N more").
func List(entries []string, sep string) string {
	return ListFirst(entries, MaxListed, sep)
}

// ListFirst joins the first n entries with sep and counts the others ("and N more").
func ListFirst(entries []string, n int, sep string) string {
	shown := entries[:min(len(entries), max(n, 0))]
	joined := strings.Join(shown, sep)
	if rest := len(entries) - len(shown); rest > 0 {
		if joined != "" {
			joined += sep
		}
		joined += fmt.Sprintf("and %d more", rest)
	}
	return joined
}

// Truncate returns text cut to at most limit bytes, at a character boundary, ending with an
// ellipsis when it was cut.
func Truncate(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	if limit < len(ellipsis) {
		return ""
	}
	cut := limit - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + ellipsis
}

// Condition is text bounded for a condition's message.
func Condition(text string) string { return Truncate(text, MaxCondition) }

// Event is text bounded for an event's note.
func Event(text string) string { return Truncate(text, MaxEvent) }

// OnDemandRun is text bounded for the message of an OaatRun's status.
func OnDemandRun(text string) string { return Truncate(text, MaxOnDemandRun) }
