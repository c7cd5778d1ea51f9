// Package podbuild makes the pod that runs one item of an OaatGroup from its OaatType's pod
// template: a deterministic name, the operator's labels and annotations, an owner reference to
// the group, and the item substituted into commands, args and environment. It is pure: it reads
// no clock and calls no API.
package podbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

// hashLen is the number of hex digits of the hash in pod names and sanitized item label values:
// 40 bits, so that a collision among the items of a group is negligible.
const hashLen = 10

// Name returns the name of the pod of run number run (at least 1) of item in the OaatGroup named
// group. It has the form <group>-<item>-<hash>-<run>: the readable part is the group name and the
// item reduced to lower-case letters, digits and single hyphens, shortened so that the whole name
// is a DNS-1123 label of at most 63 characters; the hash covers group and item exactly, so
// distinct (group, item, run) give distinct names even when their readable parts are equal.
func Name(group, item string, run int64) string {
	// A group name is a DNS label, which cannot hold a NUL byte: the separator keeps ("ab", "c")
	// and ("a", "bc") apart.
	suffix := "-" + hash(group+"\x00"+item) + "-" + strconv.FormatInt(run, 10)
	prefix := fit(sanitize(group+"-"+item, dnsLabelRune), content.DNS1123LabelMaxLength-len(suffix))
	if prefix == "" {
		return strings.TrimPrefix(suffix, "-")
	}
	return prefix + suffix
}

// ItemLabelValue returns the value of the pod label v1alpha1.LabelItem for item: item itself when
// it is a valid label value, else item reduced to the characters a label value allows, shortened,
// followed by '-' and a hash of item. Two distinct items thus get distinct values, barring a hash
// collision or an item written to equal another item's reduced form.
func ItemLabelValue(item string) string {
	if len(content.IsLabelValue(item)) == 0 {
		return item
	}
	prefix := fit(sanitize(item, labelValueRune), content.LabelValueMaxLength-1-hashLen)
	if prefix == "" {
		return hash(item)
	}
	return prefix + "-" + hash(item)
}

// hash returns the first hashLen lower-case hex digits of the SHA-256 of s.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// sanitize maps each rune of s through keep, which returns '-' for a rune that is not allowed,
// and collapses runs of '-' into one. Invalid UTF-8 bytes reach keep as utf8.RuneError.
func sanitize(s string, keep func(rune) rune) string {
	var b strings.Builder
	b.Grow(len(s))
	var prev rune
	for _, r := range s {
		r = keep(r)
		if r == '-' && prev == '-' {
			continue
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// fit trims s, whose characters are all ASCII, to start and end with a letter or digit and to be
// at most maxLen bytes long.
func fit(s string, maxLen int) string {
	s = strings.TrimLeftFunc(s, notAlphanumeric)
	if len(s) > maxLen {
		s = s[:maxLen]
	}
	return strings.TrimRightFunc(s, notAlphanumeric)
}

// dnsLabelRune maps r to a character of a DNS-1123 label: upper-case ASCII letters become lower
// case, any other character than a lower-case ASCII letter or digit becomes '-'.
func dnsLabelRune(r rune) rune {
	switch {
	case 'A' <= r && r <= 'Z':
		return r - 'A' + 'a'
	case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
		return r
	default:
		return '-'
	}
}

// labelValueRune maps r to a character of a label value: ASCII letters, digits, '.' and '_' are
// kept, any other character becomes '-'.
func labelValueRune(r rune) rune {
	if isAlphanumeric(r) || r == '.' || r == '_' {
		return r
	}
	return '-'
}

// isAlphanumeric reports whether r is an ASCII letter or digit.
func isAlphanumeric(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// notAlphanumeric reports whether r is not an ASCII letter or digit.
func notAlphanumeric(r rune) bool {
	return !isAlphanumeric(r)
}
