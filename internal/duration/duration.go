// Package duration parses the duration syntax of an OaatGroup's frequency and failureCoolOff
// (v1alpha1.Duration), which is the original oaat-operator's: integer+unit tokens such as 1h30m
// or "1 hour 30 min", summed, in any order. Parse accepts exactly the strings that the admission
// rules of v1alpha1.Duration accept, so a group that passed admission always parses (a rule of
// its own refuses a sum that overflows a time.Duration).
package duration

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

const (
	day  = 24 * time.Hour
	week = 7 * day
)

// units maps each unit name of the admission rule of v1alpha1.Duration to its length.
var units = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": day, "day": day, "days": day,
	"w": week, "wk": week, "wks": week, "week": week, "weeks": week,
}

// errTooLarge is wrapped by the error of a duration whose sum does not fit in a time.Duration:
// admission refuses such strings too (a rule of its own on v1alpha1.Duration).
var errTooLarge = fmt.Errorf("too large: the maximum is %v (about 292 years)", time.Duration(math.MaxInt64))

// token is one number and unit of a duration string, as written.
type token struct {
	digits string
	unit   string
}

// Parse returns the length of time that s denotes: the sum of its integer+unit tokens. Units are
// s sec secs second seconds, m min mins minute minutes, h hr hrs hour hours, d day days (24h) and
// w wk wks week weeks (7d); spaces may surround tokens and separate a number from its unit.
// The sum must be positive. Errors quote s and say what is wrong with it.
func Parse(s string) (time.Duration, error) {
	tokens, err := lex(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: %w", s, err)
	}
	total, err := sum(tokens)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: %w", s, err)
	}
	if total == 0 {
		return 0, fmt.Errorf("invalid duration %q: it is zero, a duration must be positive", s)
	}
	return total, nil
}

// lex splits s into tokens, checking the syntax only: the values are summed by sum, so that a
// syntax error is reported in preference to an overflow.
func lex(s string) ([]token, error) {
	var tokens []token
	for i := skipSpaces(s, 0); i < len(s); i = skipSpaces(s, i) {
		start := i
		i = skip(s, i, isDigit)
		digits := s[start:i]
		i = skipSpaces(s, i)
		start = i
		i = skip(s, i, unicode.IsLetter)
		unit := s[start:i]

		switch {
		case digits == "" && unit != "":
			return nil, fmt.Errorf("unit %q has no number before it", unit)
		case digits != "" && unit == "" && (i == len(s) || isDigit(rune(s[i]))):
			return nil, fmt.Errorf("number %s has no unit: write for example %ss or %sm", digits, digits, digits)
		case unit == "":
			return nil, unexpected(s, i)
		}
		if _, ok := units[unit]; !ok {
			return nil, unknownUnit(unit)
		}
		tokens = append(tokens, token{digits: digits, unit: unit})
	}
	if len(tokens) == 0 {
		return nil, errors.New("it is empty: write integer+unit tokens such as 30s, 5m, 1h30m or 1d")
	}
	return tokens, nil
}

// unexpected is the error for the character at offset i of s, which can start no token.
func unexpected(s string, i int) error {
	r, _ := utf8.DecodeRuneInString(s[i:])
	if r == '-' {
		return fmt.Errorf("unexpected character '-' at offset %d: a duration cannot be negative and tokens cannot be subtracted", i)
	}
	return fmt.Errorf("unexpected character %q at offset %d: only digits, units and spaces are allowed", r, i)
}

// unknownUnit is the error for a unit name that is not in units, with a hint when only its case
// is wrong.
func unknownUnit(unit string) error {
	if _, ok := units[strings.ToLower(unit)]; ok {
		return fmt.Errorf("unknown unit %q: units are lower case, write %q", unit, strings.ToLower(unit))
	}
	return fmt.Errorf("unknown unit %q: use s, m, h, d or w, or a long form such as sec, min, hours, days or weeks", unit)
}

// sum adds up the tokens, failing with errTooLarge when the total does not fit in a
// time.Duration.
func sum(tokens []token) (time.Duration, error) {
	var total time.Duration
	for _, t := range tokens {
		unit := units[t.unit]
		n, ok := atoi(t.digits)
		if !ok || n > int64(math.MaxInt64/unit) {
			return 0, errTooLarge
		}
		d := time.Duration(n) * unit
		if total > math.MaxInt64-d {
			return 0, errTooLarge
		}
		total += d
	}
	return total, nil
}

// atoi converts a string of ASCII digits, of any length and with any leading zeros, to an int64;
// ok is false when the value does not fit.
func atoi(digits string) (n int64, ok bool) {
	for _, c := range []byte(digits) {
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// skipSpaces returns the offset of the first byte at or after i that is not a space. Only the
// space character counts: the admission rule rejects tabs and other white space.
func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// skip returns the offset of the first rune at or after i for which keep is false.
func skip(s string, i int, keep func(rune) bool) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !keep(r) {
			break
		}
		i += size
	}
	return i
}

// isDigit reports whether r is an ASCII digit; other Unicode digits are not allowed.
func isDigit(r rune) bool {
	return '0' <= r && r <= '9'
}
