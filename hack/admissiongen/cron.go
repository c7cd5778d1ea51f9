package main

import (
	"fmt"
	"strings"
)

// cronShape is the syntax the API accepts before any field is read: five fields of digits,
// names, * ? / , - or one of the descriptors. internal/schedule's cronShape is the same pattern.
const cronShape = `^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*?/,-]+( +[0-9A-Za-z*?/,-]+){4})$`

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
	// value matches one value of the field.
	value string
	// names are the field's names in order, lower case; the first is worth firstName.
	names     []string
	firstName int
	// allowed says what the field takes, in the message.
	allowed string
}

var cronFields = []cronField{
	{name: "minute", index: 0, value: `0*([0-9]|[1-5][0-9])`, allowed: "numbers 0-59"},
	{name: "hour", index: 1, value: `0*([0-9]|1[0-9]|2[0-3])`, allowed: "numbers 0-23"},
	{name: "day-of-month", index: 2, value: `0*([1-9]|[12][0-9]|3[01])`, allowed: "numbers 1-31"},
	{
		name: "month", index: 3, value: `0*([1-9]|1[0-2])|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)`,
		names:     []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"},
		firstName: 1, allowed: "numbers 1-12 or JAN-DEC",
	},
	{
		name: "day-of-week", index: 4, value: `0*[0-6]|(?i:sun|mon|tue|wed|thu|fri|sat)`,
		names:     []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"},
		firstName: 0, allowed: "numbers 0-6 (Sunday is 0, 7 is refused) or SUN-SAT",
	},
}

// field is the CEL expression of field i of self, a string that matches cronShape and is not a
// descriptor.
func field(i int) string { return fmt.Sprintf("self.split(' ').filter(f, f != '')[%d]", i) }

// parts is the CEL list of the non-empty parts of field i.
func parts(i int) string { return field(i) + ".split(',').filter(p, p != '')" }

// partPattern matches one valid part of the field, its step's size apart.
func (f cronField) partPattern() string {
	v := "(" + f.value + ")"
	return `^([*?](-[^/]*)?|` + v + `(-` + v + `)?)(/0*[1-9][0-9]*)?$`
}

// valueOf is the CEL int of x, a CEL string that matches the field's value pattern.
func (f cronField) valueOf(x string) string {
	if f.names == nil {
		return "int(" + x + ")"
	}
	return fmt.Sprintf("(%s.matches('^[0-9]+$') ? int(%s) : ['%s'].indexOf(%s.lowerAscii()) + %d)",
		x, x, strings.Join(f.names, "','"), x, f.firstName)
}

// guard is true when self is a descriptor or does not have the cron shape: the shape rule
// speaks for it, and the field rules do not read it.
const guard = "self.startsWith('@') || !self.matches('" + cronShape + "')"

// rule is the field's CEL rule: every part valid, each range in order, each step an int64.
func (f cronField) rule() string {
	head := "p.split('/')[0].split('-')"
	step := "p.split('/')[1].find('[1-9][0-9]*')"
	return fmt.Sprintf("%s || %s.split(',').all(p, p == '' || (p.matches('%s')"+
		" && (p.matches('^[*?]') || size(%s) == 1 || %s <= %s)"+
		" && (!p.contains('/') || size(%s) < 19 || (size(%s) == 19 && %s <= '9223372036854775807'))))",
		guard, field(f.index), f.partPattern(),
		head, f.valueOf(head+"[0]"), f.valueOf(head+"[1]"),
		step, step, step)
}

// message is the field rule's messageExpression.
func (f cronField) message() string {
	return fmt.Sprintf(`'schedule "' + self + '": the %s field "' + %s + '" is not valid: use %s, * or ?, `+
		`ranges a-b with a <= b, lists a,b and steps */n, a/n or a-b/n with n >= 1'`, f.name, field(f.index), f.allowed)
}

// noDateRule is true unless the expression matches no date, as internal/schedule refuses it
// (robfig's parser accepts it: a schedule that never ticks). A list of only commas is empty. The
// day-of-month and day-of-week fields combine as robfig combines them: when either has a part
// * or ? without a step above 1, a day must match both; otherwise either. So no date comes when
// the minute, hour or month field is empty; when the day-of-month field is * and the day-of-week
// field empty; or when the day-of-week field is * or empty and no day of the day-of-month field
// (its smallest value) is in any month of the month field (February counting 29 days). The
// guard skips expressions whose day-of-month or month parts are invalid: their field rules refuse
// them, and this rule does not read them.
func noDateRule() string {
	dom, month := cronFields[2], cronFields[3]
	star := "p.matches('^[*?](-[^/]*)?(/0*1)?$')"
	empty := func(i int) string { return "size(" + parts(i) + ") == 0" }
	valid := func(f cronField) string {
		return fmt.Sprintf("%s.split(',').all(p, p == '' || p.matches('%s'))", field(f.index), f.partPattern())
	}
	head := "p.split('/')[0].split('-')"
	start := fmt.Sprintf("(p.matches('^[*?]') ? 1 : %s)", month.valueOf(head+"[0]"))
	end := fmt.Sprintf("(p.matches('^[*?]') || (size(%s) == 1 && p.contains('/')) ? 12 : %s)", head, month.valueOf(head+"[size("+head+") - 1]"))
	// A step above 12 keeps the start only, as 100 does; it spares int() a 19-digit number.
	step := "(!p.contains('/') ? 1 : p.split('/')[1].matches('^0*[0-9]{1,2}$') ? int(p.split('/')[1]) : 100)"
	inMonth := fmt.Sprintf("%s.exists(p, %s <= m && m <= %s && (m - %s) %% %s == 0)", parts(3), start, end, start, step)
	minDay := fmt.Sprintf("%s.map(p, p.matches('^[*?]') ? 1 : int(p.split('/')[0].split('-')[0])).min()", parts(2))
	someDay := fmt.Sprintf("[1,2,3,4,5,6,7,8,9,10,11,12].exists(m, [31,29,31,30,31,30,31,31,30,31,30,31][m - 1] >= %s && %s)", minDay, inMonth)
	domStar := parts(2) + ".exists(p, " + star + ")"
	dowStar := parts(4) + ".exists(p, " + star + ")"
	return fmt.Sprintf("%s || !(%s && %s) || !(%s || %s || %s || (%s ? %s : ((%s || %s) && (%s || !(%s)))))",
		guard, valid(dom), valid(month),
		empty(0), empty(1), empty(3),
		domStar, empty(4),
		dowStar, empty(4), empty(2), someDay)
}

// noDateMessage is the no-date rule's messageExpression.
const noDateMessage = `'schedule "' + self + '" matches no date: the day-of-month field names no day that the months of the month field have ` +
	`(February has 29 at most; April, June, September and November 30), or a field is an empty list'`
