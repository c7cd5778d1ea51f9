package schedule

import (
	"fmt"
	"time"
)

// Window is a daily blackout window: no item starts inside one.
//
// An occurrence of a window belongs to a calendar date D in the window's time zone: it starts at
// D start and ends at D end, or at D+1 end when end is at or before start (the window crosses
// midnight). When days are set, only the dates whose weekday is one of them start an occurrence,
// so a window from Friday 22:00 to 02:00 covers Saturday 01:00 but not Saturday 23:00. Occurrences
// are half-open: they contain their start but not their end.
//
// Across daylight-saving changes a window keeps its wall-clock times, with the instants that
// time.Date makes of them. A time that a spring-forward gap skips is normalised by the length of
// the gap (02:30 on the day Europe/Berlin skips 02:00-03:00 becomes 03:30 CEST), so the occurrence
// starts or ends there; an occurrence whose start is normalised to or past its end (02:30-03:00 on
// that day) is empty and does not exist. A time that a fall-back overlap repeats is read as one of
// its two instants, which Go does not specify (in Europe/Berlin it is the second, standard-time
// one; in America/New_York the first), so a window inside the repeated hour is blacked out once.
//
// The zero Window has no occurrences; make windows with ParseWindow.
type Window struct {
	// start and end are the minutes of the day at which an occurrence starts and ends.
	start, end int
	// days has bit time.Weekday set for each day on which an occurrence starts; zero means every
	// day.
	days uint8
	// loc is the time zone in which start, end and days are read; nil means UTC.
	loc *time.Location

	// StopRunning: a run still going when the window opens is stopped.
	StopRunning bool
	// AvoidOverrun: an item is not started when its expected run would reach into the window.
	AvoidOverrun bool
}

// weekdayNames are the day names of a window's spec, indexed by time.Weekday.
var weekdayNames = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// ParseWindow makes a window from its spec: start and end "HH:MM" (24h, 00:00..23:59), days
// (subset of "Mon","Tue","Wed","Thu","Fri","Sat","Sun"; empty = every day; a day names the day on
// which an occurrence STARTS) and an IANA time zone name ("" = UTC). end <= start means the window
// crosses midnight and ends the next day; start == end is an error. Errors are specific and quote
// the bad value, e.g. `start "25:00" is not a time of day HH:MM`, `time zone "Mars/Olympus":
// unknown time zone Mars/Olympus`. "Local" is refused: it would make the window depend on the
// operator's host. The zone is loaded with time.LoadLocation, so it needs the zone database of the
// system or of time/tzdata.
func ParseWindow(start, end string, days []string, timeZone string) (Window, error) {
	startMinute, ok := minuteOfDay(start)
	if !ok {
		return Window{}, fmt.Errorf("start %q is not a time of day HH:MM", start)
	}
	endMinute, ok := minuteOfDay(end)
	if !ok {
		return Window{}, fmt.Errorf("end %q is not a time of day HH:MM", end)
	}
	if startMinute == endMinute {
		return Window{}, fmt.Errorf("start and end are both %q: a window cannot be empty", start)
	}
	var daySet uint8
	for _, day := range days {
		bit, ok := weekdayBit(day)
		if !ok {
			return Window{}, fmt.Errorf("day %q is not one of Mon, Tue, Wed, Thu, Fri, Sat, Sun", day)
		}
		if daySet&bit != 0 {
			return Window{}, fmt.Errorf("day %q is listed twice", day)
		}
		daySet |= bit
	}
	if timeZone == "Local" {
		return Window{}, fmt.Errorf("time zone %q is not an IANA time zone name", timeZone)
	}
	loc, err := time.LoadLocation(timeZone)
	if err != nil {
		return Window{}, fmt.Errorf("time zone %q: %w", timeZone, err)
	}
	return Window{start: startMinute, end: endMinute, days: daySet, loc: loc}, nil
}

// minuteOfDay reads "HH:MM" (exactly two digits each, 00:00 to 23:59) as minutes after midnight.
func minuteOfDay(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	digits := [4]byte{s[0], s[1], s[3], s[4]}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	hour := int(digits[0]-'0')*10 + int(digits[1]-'0')
	minute := int(digits[2]-'0')*10 + int(digits[3]-'0')
	if hour > 23 || minute > 59 {
		return 0, false
	}
	return hour*60 + minute, true
}

// weekdayBit returns the bit of Window.days for a day name of the spec.
func weekdayBit(name string) (uint8, bool) {
	for day, n := range weekdayNames {
		if n == name {
			return 1 << day, true
		}
	}
	return 0, false
}

// occurrence is one opening of a window: [start, end).
type occurrence struct {
	start, end time.Time
}

// location is the window's time zone.
func (w Window) location() *time.Location {
	if w.loc == nil {
		return time.UTC
	}
	return w.loc
}

// occurrenceOn returns the occurrence that starts on the local date year-month-day (normalised as
// time.Date does, so day may be out of range), and false when that date has none: its weekday is
// not one of the days, a daylight-saving gap swallowed it, or w is the zero Window.
func (w Window) occurrenceOn(year int, month time.Month, day int) (occurrence, bool) {
	if w.start == w.end {
		return occurrence{}, false
	}
	// The weekday of the date itself, read in UTC so that no clock change can move it.
	weekday := time.Date(year, month, day, 0, 0, 0, 0, time.UTC).Weekday()
	if w.days != 0 && w.days&(1<<weekday) == 0 {
		return occurrence{}, false
	}
	loc := w.location()
	endDay := day
	if w.end < w.start {
		endDay++
	}
	o := occurrence{
		start: time.Date(year, month, day, w.start/60, w.start%60, 0, 0, loc),
		end:   time.Date(year, month, endDay, w.end/60, w.end%60, 0, 0, loc),
	}
	if !o.end.After(o.start) {
		return occurrence{}, false
	}
	return o, true
}

// covering returns the occurrence of w that contains t, and false when none does. Should a
// daylight-saving change stretch one occurrence into the next, so that both contain t, it returns
// the start of the one that starts on the earlier date and the later end.
func (w Window) covering(t time.Time) (occurrence, bool) {
	year, month, day := t.In(w.location()).Date()
	var found occurrence
	ok := false
	// An occurrence ends on the date it starts or the next, so the ones starting on t's date and
	// the day before would do; one more date on each side keeps this right when a clock change
	// crosses midnight.
	for offset := -2; offset <= 1; offset++ {
		o, exists := w.occurrenceOn(year, month, day+offset)
		if !exists || t.Before(o.start) || !t.Before(o.end) {
			continue
		}
		if !ok {
			found, ok = o, true
			continue
		}
		if o.end.After(found.end) {
			found.end = o.end
		}
	}
	return found, ok
}

// nextStartSearchDays is how many dates after t's NextStart looks at: a week to reach any weekday,
// and another for when a daylight-saving gap swallowed that weekday's occurrence.
const nextStartSearchDays = 15

// nextStart returns the start of the first occurrence of w that starts strictly after t, and false
// when w has none (the zero Window).
func (w Window) nextStart(t time.Time) (time.Time, bool) {
	year, month, day := t.In(w.location()).Date()
	var next time.Time
	ok := false
	for offset := -1; offset <= nextStartSearchDays; offset++ {
		o, exists := w.occurrenceOn(year, month, day+offset)
		if exists && o.start.After(t) && (!ok || o.start.Before(next)) {
			next, ok = o.start, true
		}
	}
	return next, ok
}

// Covering returns the end of the occurrence of w that contains t (start <= t < end) and true,
// or the zero time and false when t is outside every occurrence. Should a daylight-saving change
// make two occurrences contain t, it returns the later end.
func (w Window) Covering(t time.Time) (time.Time, bool) {
	o, ok := w.covering(t)
	return o.end, ok
}

// NextStart returns the start of the first occurrence of w that starts strictly after t; the zero
// time for the zero Window, which has none.
func (w Window) NextStart(t time.Time) time.Time {
	next, _ := w.nextStart(t)
	return next
}

// Windows are a group's blackout windows.
type Windows []Window

// freeSearchLimit is how long FreeAt follows chained occurrences before it concludes that the
// windows cover every instant: they repeat every week, so a blackout longer than a week and a day
// has no end.
const freeSearchLimit = 8 * 24 * time.Hour

// FreeAt returns the earliest instant at or after t that lies outside every window (occurrences
// that overlap or touch, of the same or different windows, are chained), and whether t itself was
// inside one. When t is outside every window it returns t and false.
//
// When the windows together cover every instant, no such instant exists: FreeAt stops once the
// blackout has lasted more than eight days and returns the end of the occurrence it stopped at,
// which is still blacked out, and true. A caller that checks again at that instant stays safe.
func (ws Windows) FreeAt(t time.Time) (time.Time, bool) {
	free := t
	limit := t.Add(freeSearchLimit)
	for {
		moved := false
		for _, w := range ws {
			if end, ok := w.Covering(free); ok {
				free, moved = end, true
			}
		}
		if !moved || free.After(limit) {
			return free, !free.Equal(t)
		}
	}
}

// NextStopAfter returns the start of the first occurrence of a StopRunning window that starts
// strictly after t, and false when no window has StopRunning.
func (ws Windows) NextStopAfter(t time.Time) (time.Time, bool) {
	var next time.Time
	found := false
	for _, w := range ws {
		if !w.StopRunning {
			continue
		}
		if start, ok := w.nextStart(t); ok && (!found || start.Before(next)) {
			next, found = start, true
		}
	}
	return next, found
}

// Overruns reports whether a run starting at start and lasting d would reach into an occurrence
// of an AvoidOverrun window ([start, start+d) intersects it). d <= 0 never overruns. It also
// returns the start of that occurrence: of the earliest one when several are reached, which lies
// before start when start is already inside it.
func (ws Windows) Overruns(start time.Time, d time.Duration) (time.Time, bool) {
	if d <= 0 {
		return time.Time{}, false
	}
	runEnd := start.Add(d)
	var first time.Time
	found := false
	for _, w := range ws {
		if !w.AvoidOverrun {
			continue
		}
		reached, ok := w.firstReached(start, runEnd)
		if ok && (!found || reached.Before(first)) {
			first, found = reached, true
		}
	}
	return first, found
}

// firstReached returns the start of the earliest occurrence of w that intersects [from, to), and
// false when none does.
func (w Window) firstReached(from, to time.Time) (time.Time, bool) {
	if o, ok := w.covering(from); ok {
		return o.start, true
	}
	next, ok := w.nextStart(from)
	if !ok || !next.Before(to) {
		return time.Time{}, false
	}
	return next, true
}
