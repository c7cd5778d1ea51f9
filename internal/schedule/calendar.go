package schedule

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duration"
)

// Calendar is a group's calendar schedule: a cron expression read in a time zone, whose ticks each
// start a round in which every item is due once, delayed by a jitter that is the same for a group
// and a tick whenever it is computed.
//
// Ticks are wall-clock times of the zone. A tick that a spring-forward gap skips (02:30 on the day
// Europe/Berlin goes from 02:00 CET to 03:00 CEST) happens once, at the end of the gap (03:00
// CEST); several ticks in one gap, and a tick at the end of the gap, make that one tick. A tick
// that a fall-back repeats (01:30 on the day America/New_York goes from 01:59 EDT back to 01:00
// EST) happens once, at its first instant (01:30 EDT). The cron library alone would skip the first
// and fire the second twice, as the Kubernetes CronJob controller does (kubernetes#121594): the
// expression is evaluated here on the wall clock, as if the zone were UTC, and each wall-clock tick
// is then placed in the zone.
//
// The zero Calendar has no ticks; make calendars with ParseCalendar.
type Calendar struct {
	// spec is the parsed expression, evaluated on wall-clock times written as UTC.
	spec cron.Schedule
	// loc is the zone the wall-clock times are read in.
	loc *time.Location
	// jitter is the longest delay of a round's start after its tick.
	jitter time.Duration
	// seed makes the delay of each tick particular to the group.
	seed uint64
}

// cronParser reads the 5 standard fields and the descriptors, as the CronJob controller does.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// cronShape is the syntax the API accepts: five fields of digits, names, * ? / , - or one of the
// descriptors below. The cron library also reads "@every 1h" and a "TZ=" prefix, which the API
// leaves to spec.frequency and spec.scheduleTimeZone.
var cronShape = regexp.MustCompile(`^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*?/,-]+( +[0-9A-Za-z*?/,-]+){4})$`)

// maxScheduleLength is the longest expression the API accepts (v1alpha1.CronSchedule's
// MaxLength): longer ones are refused here too, so that the operator reads exactly what admission
// lets through.
const maxScheduleLength = 128

// tickSearchLimit is how far back from an instant the previous tick is looked for, and how far
// ahead a schedule must have a tick: the cron library gives up after five years too.
const tickSearchLimit = 5 * 366 * 24 * time.Hour

// ParseCalendar makes a calendar from its spec: a cron expression (five fields, or @yearly,
// @annually, @monthly, @weekly, @daily, @midnight, @hourly), an IANA time zone name ("" = UTC), the
// longest jitter (zero for none) and the group's identity, which seeds the jitter. Errors quote the
// bad value and name the field of the spec: `schedule "61 * * * *": end of range (61) above
// maximum (59): 61`, `scheduleTimeZone "Mars/Olympus": unknown time zone Mars/Olympus`. An expression that matches no date (0 0 30 2 *)
// is refused too. "Local" is refused: it would make the schedule depend on the operator's host.
func ParseCalendar(expr, timeZone string, jitter time.Duration, identity string) (Calendar, error) {
	if len(expr) > maxScheduleLength {
		return Calendar{}, fmt.Errorf("schedule %q is longer than %d characters", expr, maxScheduleLength)
	}
	if !cronShape.MatchString(expr) {
		return Calendar{}, fmt.Errorf("schedule %q is not a cron expression of five fields or one of @yearly, @monthly, @weekly, @daily, @hourly", expr)
	}
	spec, err := cronParser.Parse(expr)
	if err != nil {
		return Calendar{}, fmt.Errorf("schedule %q: %w", expr, err)
	}
	if timeZone == "Local" {
		return Calendar{}, fmt.Errorf("scheduleTimeZone %q is not an IANA time zone name", timeZone)
	}
	loc, err := time.LoadLocation(timeZone)
	if err != nil {
		return Calendar{}, fmt.Errorf("scheduleTimeZone %q: %w", timeZone, err)
	}
	if jitter < 0 {
		return Calendar{}, errors.New("jitter cannot be negative")
	}
	hash := fnv.New64a()
	_, _ = hash.Write([]byte(identity))
	c := Calendar{spec: spec, loc: loc, jitter: jitter, seed: hash.Sum64()}
	// A date that never comes (February 30) makes a schedule that never ticks; leap days come
	// within five years of any instant, so one look from a fixed instant tells.
	if spec.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return Calendar{}, fmt.Errorf("schedule %q matches no date", expr)
	}
	return c, nil
}

// IsZero reports whether c is the zero Calendar, which has no ticks.
func (c Calendar) IsZero() bool { return c.spec == nil }

// wall is the wall-clock time of t in the calendar's zone, written as UTC.
func (c Calendar) wall(t time.Time) time.Time {
	y, mo, d := t.In(c.loc).Date()
	h, mi, s := t.In(c.loc).Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
}

// instant places a wall-clock time (written as UTC) in the calendar's zone: the first instant
// that shows it, or, when a spring-forward gap skips it, the end of the gap.
func (c Calendar) instant(wall time.Time) time.Time {
	t := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, c.loc)
	shown := c.wall(t)
	switch {
	case shown.After(wall):
		// In the gap, and placed after it: the gap ends where t's zone starts.
		start, _ := t.ZoneBounds()
		return start
	case shown.Before(wall):
		// In the gap, and placed before it: the gap ends where t's zone ends.
		_, end := t.ZoneBounds()
		return end
	}
	// A repeated wall time: the earlier instant shows it too, one offset change before.
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		return t
	}
	_, before := start.Add(-time.Second).Zone()
	_, after := t.Zone()
	if before > after {
		if earlier := t.Add(-time.Duration(before-after) * time.Second); c.wall(earlier).Equal(wall) {
			return earlier
		}
	}
	return t
}

// NextTick returns the first tick strictly after t, and false when there is none within five
// years (or c is the zero Calendar).
func (c Calendar) NextTick(t time.Time) (time.Time, bool) {
	if c.IsZero() {
		return time.Time{}, false
	}
	wall := c.wall(t)
	limit := t.Add(tickSearchLimit)
	for {
		wall = c.spec.Next(wall)
		if wall.IsZero() {
			return time.Time{}, false
		}
		// Wall-clock ticks are in order and so are their instants; a tick already passed is the
		// first instant of a wall time that a fall-back repeats now.
		if tick := c.instant(wall); tick.After(t) {
			return tick, true
		}
		if wall.After(limit) {
			return time.Time{}, false
		}
	}
}

// PrevTick returns the last tick at or before t, and false when there is none within five years.
func (c Calendar) PrevTick(t time.Time) (time.Time, bool) {
	if c.IsZero() {
		return time.Time{}, false
	}
	// NextTick(s) grows with s: find the latest whole second s with NextTick(s) <= t. The tick
	// before t lies at most a doubling step before the first s found with a tick in (s, t].
	t = t.Truncate(time.Second)
	step := time.Minute
	lo := t.Add(-step)
	for {
		if tick, ok := c.NextTick(lo); ok && !tick.After(t) {
			break
		}
		if step > tickSearchLimit {
			return time.Time{}, false
		}
		step *= 2
		lo = t.Add(-step)
	}
	hi := t // NextTick(hi) > t
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
		if tick, ok := c.NextTick(mid); ok && !tick.After(t) {
			lo = mid
		} else {
			hi = mid
		}
	}
	tick, _ := c.NextTick(lo)
	return tick, true
}

// Delay is how long the round of tick waits after it: a whole number of seconds below the jitter
// and below the time to the next tick (so rounds start in the order of their ticks), drawn from a
// hash of the group's identity and the tick. It is the same for a group and a tick whenever and
// wherever it is computed, so a restart does not move a round's start.
func (c Calendar) Delay(tick time.Time) time.Duration {
	span := c.jitter
	if next, ok := c.NextTick(tick); ok {
		span = min(span, next.Sub(tick))
	}
	seconds := uint64(span / time.Second)
	if seconds == 0 {
		return 0
	}
	hash := fnv.New64a()
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], c.seed)
	binary.BigEndian.PutUint64(buf[8:], uint64(tick.Unix()))
	_, _ = hash.Write(buf[:])
	return time.Duration(hash.Sum64()%seconds) * time.Second
}

// RoundStart returns when the round of the last tick at or before t starts (the tick plus its
// delay) if it has started by t, else when the round of the tick before it did; false when no
// tick after notBefore has a round started by t. A tick at or before notBefore (the group's
// creation) makes no round.
func (c Calendar) RoundStart(t, notBefore time.Time) (time.Time, bool) {
	tick, ok := c.PrevTick(t)
	for range 2 {
		if !ok || !tick.After(notBefore) {
			return time.Time{}, false
		}
		if start := tick.Add(c.Delay(tick)); !start.After(t) {
			return start, true
		}
		tick, ok = c.PrevTick(tick.Add(-time.Second))
	}
	return time.Time{}, false
}

// NextRoundStart returns when the first round that starts strictly after t starts, counting only
// ticks after notBefore; false when there is none within five years.
func (c Calendar) NextRoundStart(t, notBefore time.Time) (time.Time, bool) {
	if tick, ok := c.PrevTick(t); ok && tick.After(notBefore) {
		if start := tick.Add(c.Delay(tick)); start.After(t) {
			return start, true
		}
	}
	from := t
	if notBefore.After(from) {
		from = notBefore
	}
	tick, ok := c.NextTick(from)
	if !ok {
		return time.Time{}, false
	}
	return tick.Add(c.Delay(tick)), true
}

// GroupCalendar reads a group's spec.schedule, spec.scheduleTimeZone and spec.jitter; the zero
// Calendar and no error when the group has no schedule. Errors name the field of the spec. The
// jitter is seeded with the group's namespace, name and uid, so each group's rounds start at their
// own offsets, the same after a restart, and a group deleted and created again under the same name
// draws anew.
func GroupCalendar(g *v1alpha1.OaatGroup) (Calendar, error) {
	if g.Spec.Schedule == "" {
		return Calendar{}, nil
	}
	var jitter time.Duration
	if g.Spec.Jitter != "" {
		var err error
		if jitter, err = duration.Parse(string(g.Spec.Jitter)); err != nil {
			return Calendar{}, fmt.Errorf("spec.jitter: %w", err)
		}
	}
	identity := g.Namespace + "/" + g.Name + "/" + string(g.UID)
	c, err := ParseCalendar(string(g.Spec.Schedule), string(g.Spec.ScheduleTimeZone), jitter, identity)
	if err != nil {
		return Calendar{}, fmt.Errorf("spec.%w", err)
	}
	return c, nil
}

// Overdue is how long past its deadline an item of a scheduled group is at now: the first round
// that starts after the item's last success (after created when it never succeeded) made it due,
// and the start of the round after that one is its deadline. Zero before the deadline.
func (c Calendar) Overdue(lastSuccess, created, now time.Time) time.Duration {
	since := created
	if !lastSuccess.IsZero() && lastSuccess.After(since) {
		since = lastSuccess
	}
	due, ok := c.NextRoundStart(since, created)
	if !ok || due.After(now) {
		return 0
	}
	deadline, ok := c.NextRoundStart(due, created)
	if !ok {
		return 0
	}
	return max(now.Sub(deadline), 0)
}
