package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The cron rules are regular expressions on the whole expression, one per field: CEL's cost of
// matches is the string's length times the pattern's, while splitting the expression into fields
// and parts costs, by the estimator's count, as if every part could be 128 characters long and
// there could be 128 of them (over a million per rule, beyond the budget with names). A regular
// expression cannot compare two numbers, so the ranges a-b with a <= b are listed, per a.

// cronShape is the syntax the API accepts before any field is read: five fields of digits,
// names, * ? / , - or one of the descriptors. internal/schedule's cronShape is the same pattern.
const cronShape = `^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*?/,-]+( +[0-9A-Za-z*?/,-]+){4})$`

// maxInt64 is the largest step robfig's parser reads (strconv.Atoi).
const maxInt64 = "9223372036854775807"

// cronField is one of the five fields of a cron expression as github.com/robfig/cron/v3 (the
// parser of internal/schedule and of the CronJob API) reads it: comma-separated parts, empty
// parts dropped; a part is a head, * or ? (anything after a hyphen that follows them is
// ignored), a value or a range a-b with a <= b, then optionally a step /n with 1 <= n <= the
// largest int64. A value is a decimal number (any leading zeros) in [minimum, maximum] or, in
// the month and day-of-week fields, a three-letter name in any case.
type cronField struct {
	// name is how the messages call the field.
	name string
	// index is the field's place in the expression, from 0.
	index int
	// minimum and maximum bound the field's numbers.
	minimum, maximum int
	// names are the field's names in order, lower case; the first is worth minimum.
	names []string
	// allowed says what the field takes, in the message.
	allowed string
}

var cronFields = []cronField{
	{name: "minute", index: 0, minimum: 0, maximum: 59, allowed: "numbers 0-59"},
	{name: "hour", index: 1, minimum: 0, maximum: 23, allowed: "numbers 0-23"},
	{name: "day-of-month", index: 2, minimum: 1, maximum: 31, allowed: "numbers 1-31"},
	{
		name: "month", index: 3, minimum: 1, maximum: 12, allowed: "numbers 1-12 or JAN-DEC",
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"},
	},
	{
		name: "day-of-week", index: 4, minimum: 0, maximum: 6, allowed: "numbers 0-6 (Sunday is 0, 7 is refused) or SUN-SAT",
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"},
	},
}

// numbers matches the decimal numbers from lo to hi, without leading zeros: one alternative per
// ten, such as 3[7-9]|4[0-9]|5[0-9].
func numbers(lo, hi int) string {
	var alts []string
	for tens := lo / 10; tens <= hi/10; tens++ {
		first, last := max(lo, tens*10)%10, min(hi, tens*10+9)%10
		prefix := ""
		if tens > 0 {
			prefix = strconv.Itoa(tens)
		}
		if first == last {
			alts = append(alts, prefix+strconv.Itoa(first))
		} else {
			alts = append(alts, fmt.Sprintf("%s[%d-%d]", prefix, first, last))
		}
	}
	return strings.Join(alts, "|")
}

// values matches the field's values from lo to hi: numbers with any leading zeros, or names.
func (f cronField) values(lo, hi int) string {
	re := "0*(" + numbers(lo, hi) + ")"
	if f.names != nil {
		re += "|(?i:" + strings.Join(f.names[lo-f.minimum:hi-f.minimum+1], "|") + ")"
	}
	return "(" + re + ")"
}

// step matches a step: 1 to the largest int64, with any leading zeros.
func step() string {
	alts := []string{"[1-9][0-9]{0,17}"}
	for i := range len(maxInt64) {
		d := int(maxInt64[i] - '0')
		lo := 0
		if i == 0 {
			lo = 1
		}
		if d-1 >= lo {
			alts = append(alts, fmt.Sprintf("%s[%d-%d][0-9]{%d}", maxInt64[:i], lo, d-1, len(maxInt64)-i-1))
		}
	}
	alts = append(alts, maxInt64)
	return "/0*(" + strings.Join(alts, "|") + ")"
}

// part matches one valid part of the field: * or ?, a value, or a range in order; then a step.
func (f cronField) part() string {
	heads := []string{`[*?](-[^/, ]*)?`}
	for a := f.minimum; a <= f.maximum; a++ {
		heads = append(heads, f.values(a, a)+"(-"+f.values(a, f.maximum)+")?")
	}
	return "(" + strings.Join(heads, "|") + ")(" + step() + ")?"
}

// list matches a field of parts separated by commas, empty ones allowed, or of commas only.
func list(part string) string {
	return ",*" + part + "(,+" + part + ")*,*|,+"
}

// at anchors a pattern of field i inside the whole expression.
func at(i int, field string) string {
	return fmt.Sprintf("^([^ ]+ +){%d}(%s)( +[^ ]+){%d}$", i, field, 4-i)
}

// guard is true when self is a descriptor or does not have the cron shape: the shape rule
// speaks for it, and the field rules do not read it.
const guard = "self.startsWith('@') || !self.matches('" + cronShape + "')"

// valid is the CEL condition that field f is valid.
func (f cronField) valid() string { return "self.matches('" + at(f.index, list(f.part())) + "')" }

// rule is the field's CEL rule.
func (f cronField) rule() string { return guard + " || " + f.valid() }

// fieldText is the CEL expression of field i, for the messages.
func fieldText(i int) string { return fmt.Sprintf("self.split(' ').filter(f, size(f) != 0)[%d]", i) }

// message is the field rule's messageExpression.
func (f cronField) message() string {
	return fmt.Sprintf(`'schedule "' + self + '": the %s field "' + %s + '" is not valid: use %s, * or ?, `+
		`ranges a-b with a <= b, lists a,b and steps */n, a/n or a-b/n with n >= 1'`, f.name, fieldText(f.index), f.allowed)
}

// monthsWithin matches a valid month part whose months are all in the set: a value, a range or
// either with a step (a/n is a-12/n), listed for each start and end; a step above 11 keeps the
// start only.
func monthsWithin(set map[int]bool) string {
	month := cronFields[3]
	bigStep := "0*(1[2-9]|[2-9][0-9]|[1-9][0-9]{2,})"
	within := func(a, b, n int) bool {
		for m := a; m <= b; m += n {
			if !set[m] {
				return false
			}
		}
		return true
	}
	// steps matches the steps n for which the months of a-b/n are all in the set; "" for none.
	steps := func(a, b int) string {
		var alts []string
		for n := 1; n <= 11; n++ {
			if within(a, b, n) {
				alts = append(alts, "0*"+strconv.Itoa(n))
			}
		}
		if within(a, b, 12) {
			alts = append(alts, bigStep)
		}
		if alts == nil {
			return ""
		}
		return "/(" + strings.Join(alts, "|") + ")"
	}
	var parts []string
	for a := 1; a <= 12; a++ {
		head := month.values(a, a)
		if set[a] {
			parts = append(parts, head) // a alone
		}
		if s := steps(a, 12); s != "" {
			parts = append(parts, head+s) // a/n
		}
		for b := a; b <= 12; b++ {
			rng := head + "-" + month.values(b, b)
			if within(a, b, 1) {
				parts = append(parts, rng)
			}
			if s := steps(a, b); s != "" {
				parts = append(parts, rng+s)
			}
		}
	}
	p := "(" + strings.Join(parts, "|") + ")"
	return "self.matches('" + at(3, ",*"+p+"(,+"+p+")*,*") + "')"
}

// noDateRule is true unless the expression matches no date, as internal/schedule refuses it
// (robfig's parser accepts it: a schedule that never ticks). A list of commas only is empty.
// The day-of-month and day-of-week fields combine as robfig combines them: when either has a
// part * or ? without a step above 1, a day must match both; otherwise either. So no date comes
// when the minute, hour or month field is empty; when the day-of-month field is * and the
// day-of-week field empty; or when the day-of-week field is * or empty and the day-of-month
// field is empty or its smallest day (the smallest start of its parts) is in none of the months
// of the month field: 30 or 31 with February only, 31 with February, April, June, September and
// November only. It reads only expressions whose fields are all valid.
func noDateRule() string {
	empty := func(i int) string { return "self.matches('" + at(i, ",+") + "')" }
	star := func(i int) string {
		return "self.matches('" + at(i, `([^ ]*,)?[*?](-[^/, ]*)?(/0*1)?(,[^ ]*)?`) + "')"
	}
	domFrom := func(first string) string {
		p := "0*" + first + "[^, ]*"
		return "self.matches('" + at(2, ",*"+p+"(,+"+p+")*,*") + "')"
	}
	valid := make([]string, len(cronFields))
	for i, f := range cronFields {
		valid[i] = f.valid()
	}
	february := monthsWithin(map[int]bool{2: true})
	short := monthsWithin(map[int]bool{2: true, 4: true, 6: true, 9: true, 11: true})
	noDay := fmt.Sprintf("%s || (%s && %s) || (%s && %s)", empty(2), domFrom("3[01]"), february, domFrom("31"), short)
	return fmt.Sprintf("%s || !(%s) || !(%s || %s || %s || (%s ? %s : ((%s || %s) && (%s))))",
		guard, strings.Join(valid, " && "),
		empty(0), empty(1), empty(3),
		star(2), empty(4),
		star(4), empty(4), noDay)
}

// noDateMessage is the no-date rule's messageExpression.
const noDateMessage = `'schedule "' + self + '" matches no date: the day-of-month field names no day that the months of the month field have ` +
	`(February has 29 at most; April, June, September and November 30), or a field is an empty list'`
