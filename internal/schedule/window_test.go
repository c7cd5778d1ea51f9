package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// loadZone loads an IANA time zone for a test table.
func zoneNamed(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// wallTime reads "2006-01-02 15:04" in loc. Tests only use wall times that occur exactly once
// in loc; around daylight-saving changes they give instants in UTC.
func wallClock(loc *time.Location, s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		panic(err)
	}
	return t
}

// utcWall reads "2006-01-02 15:04" in UTC.
func utcWall(s string) time.Time { return wallClock(time.UTC, s) }

// parsedWindow parses a window spec that the test knows to be valid.
func parsedWindow(start, end string, days []string, timeZone string) Window {
	w, err := ParseWindow(start, end, days, timeZone)
	if err != nil {
		panic(err)
	}
	return w
}

// withStopRunning sets a window's StopRunning.
func withStopRunning(w Window) Window { w.StopRunning = true; return w }

// withAvoidOverrun sets a window's AvoidOverrun.
func withAvoidOverrun(w Window) Window { w.AvoidOverrun = true; return w }

// The week the tests use: 2026-11-16 is a Monday, 2026-11-20 a Friday.
// windowZones are the zones the window tests read wall times in. Auckland and Honolulu lie on
// either side of the date line: the same instant has different dates there.
var windowZones = struct{ berlin, newYork, kolkata, auckland, honolulu *time.Location }{
	berlin:   zoneNamed("Europe/Berlin"),
	newYork:  zoneNamed("America/New_York"),
	kolkata:  zoneNamed("Asia/Kolkata"),
	auckland: zoneNamed("Pacific/Auckland"),
	honolulu: zoneNamed("Pacific/Honolulu"),
}

func TestParseWindow(t *testing.T) {
	tests := []struct {
		name               string
		start, end         string
		days               []string
		timeZone           string
		wantStart, wantEnd int
		wantDays           uint8
		wantZone           string
	}{
		{name: "plain, UTC by default", start: "09:00", end: "17:30", wantStart: 540, wantEnd: 1050, wantZone: "UTC"},
		{name: "crossing midnight", start: "22:00", end: "02:00", wantStart: 1320, wantEnd: 120, wantZone: "UTC"},
		{
			name: "whole range of the clock", start: "00:00", end: "23:59", timeZone: "Europe/Berlin",
			wantStart: 0, wantEnd: 1439, wantZone: "Europe/Berlin",
		},
		{
			name: "days", start: "23:59", end: "00:00", days: []string{"Sun", "Fri", "Mon"}, timeZone: "UTC",
			wantStart: 1439, wantEnd: 0, wantDays: 1<<time.Sunday | 1<<time.Monday | 1<<time.Friday, wantZone: "UTC",
		},
		{
			name: "every day named", start: "01:00", end: "02:00",
			days:      []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"},
			wantStart: 60, wantEnd: 120, wantDays: 0x7f, wantZone: "UTC",
		},
		{name: "a :30 zone", start: "09:00", end: "10:00", timeZone: "Asia/Kolkata", wantStart: 540, wantEnd: 600, wantZone: "Asia/Kolkata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ParseWindow(tt.start, tt.end, tt.days, tt.timeZone)
			if err != nil {
				t.Fatalf("ParseWindow() error = %v", err)
			}
			if w.start != tt.wantStart || w.end != tt.wantEnd || w.days != tt.wantDays || w.location().String() != tt.wantZone {
				t.Fatalf("ParseWindow() = minutes %d-%d, days %07b, zone %s; want %d-%d, %07b, %s",
					w.start, w.end, w.days, w.location(), tt.wantStart, tt.wantEnd, tt.wantDays, tt.wantZone)
			}
			if w.StopRunning || w.AvoidOverrun {
				t.Fatal("ParseWindow() sets StopRunning or AvoidOverrun; the caller does")
			}
		})
	}
}

func TestParseWindowErrors(t *testing.T) {
	tests := []struct {
		name       string
		start, end string
		days       []string
		timeZone   string
		want       string
	}{
		{name: "hour too large", start: "25:00", end: "02:00", want: `start "25:00" is not a time of day HH:MM`},
		{name: "24:00 is not a time of day", start: "22:00", end: "24:00", want: `end "24:00" is not a time of day HH:MM`},
		{name: "minute too large", start: "07:60", end: "08:00", want: `start "07:60" is not a time of day HH:MM`},
		{name: "one-digit hour", start: "7:00", end: "08:00", want: `start "7:00" is not a time of day HH:MM`},
		{name: "seconds", start: "07:00", end: "08:00:00", want: `end "08:00:00" is not a time of day HH:MM`},
		{name: "wrong separator", start: "07.00", end: "08:00", want: `start "07.00" is not a time of day HH:MM`},
		{name: "not digits", start: "ab:cd", end: "08:00", want: `start "ab:cd" is not a time of day HH:MM`},
		{name: "sign", start: "+7:00", end: "08:00", want: `start "+7:00" is not a time of day HH:MM`},
		{name: "empty start", start: "", end: "08:00", want: `start "" is not a time of day HH:MM`},
		{name: "empty end", start: "07:00", end: "", want: `end "" is not a time of day HH:MM`},
		{name: "start equals end", start: "10:00", end: "10:00", want: `start and end are both "10:00": a window cannot be empty`},
		{
			name: "long day name", start: "01:00", end: "02:00", days: []string{"Mon", "Tuesday"},
			want: `day "Tuesday" is not one of Mon, Tue, Wed, Thu, Fri, Sat, Sun`,
		},
		{
			name: "day names are case-sensitive", start: "01:00", end: "02:00", days: []string{"mon"},
			want: `day "mon" is not one of Mon, Tue, Wed, Thu, Fri, Sat, Sun`,
		},
		{
			name: "empty day", start: "01:00", end: "02:00", days: []string{""},
			want: `day "" is not one of Mon, Tue, Wed, Thu, Fri, Sat, Sun`,
		},
		{
			name: "day twice", start: "01:00", end: "02:00", days: []string{"Fri", "Sat", "Fri"},
			want: `day "Fri" is listed twice`,
		},
		{
			name: "unknown zone", start: "01:00", end: "02:00", timeZone: "Mars/Olympus",
			want: `time zone "Mars/Olympus": unknown time zone Mars/Olympus`,
		},
		{
			name: "path as zone", start: "01:00", end: "02:00", timeZone: "../etc/passwd",
			want: `time zone "../etc/passwd": time: invalid location name`,
		},
		{
			name: "the host's zone", start: "01:00", end: "02:00", timeZone: "Local",
			want: `time zone "Local" is not an IANA time zone name`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ParseWindow(tt.start, tt.end, tt.days, tt.timeZone)
			if err == nil {
				t.Fatalf("ParseWindow() error = nil, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Fatalf("ParseWindow() error = %q, want %q", err, tt.want)
			}
			if w != (Window{}) {
				t.Fatalf("ParseWindow() returned %+v with its error, want the zero Window", w)
			}
		})
	}
	_, err := ParseWindow("01:00", "02:00", nil, "Mars/Olympus")
	if errors.Unwrap(err) == nil {
		t.Fatal("the time zone error does not wrap time.LoadLocation's")
	}
}

func TestCovering(t *testing.T) {
	nineToFive := parsedWindow("09:00", "17:00", nil, "")
	overnight := parsedWindow("22:00", "02:00", nil, "")
	fridayNight := parsedWindow("22:00", "02:00", []string{"Fri"}, "")
	weekdays := parsedWindow("09:00", "17:00", []string{"Mon", "Tue", "Wed", "Thu", "Fri"}, "")
	tests := []struct {
		name    string
		window  Window
		t       time.Time
		wantEnd time.Time // zero: t is outside every occurrence
	}{
		{name: "plain: before", window: nineToFive, t: utcWall("2026-11-20 09:00").Add(-time.Nanosecond)},
		{name: "plain: at the start", window: nineToFive, t: utcWall("2026-11-20 09:00"), wantEnd: utcWall("2026-11-20 17:00")},
		{name: "plain: inside", window: nineToFive, t: utcWall("2026-11-20 16:59"), wantEnd: utcWall("2026-11-20 17:00")},
		{name: "plain: at the end", window: nineToFive, t: utcWall("2026-11-20 17:00")},
		{name: "plain: at midnight", window: nineToFive, t: utcWall("2026-11-21 00:00")},

		{name: "overnight: before", window: overnight, t: utcWall("2026-11-20 21:59")},
		{name: "overnight: 23:30", window: overnight, t: utcWall("2026-11-20 23:30"), wantEnd: utcWall("2026-11-21 02:00")},
		{name: "overnight: midnight", window: overnight, t: utcWall("2026-11-21 00:00"), wantEnd: utcWall("2026-11-21 02:00")},
		{name: "overnight: 01:00 the next day", window: overnight, t: utcWall("2026-11-21 01:00"), wantEnd: utcWall("2026-11-21 02:00")},
		{name: "overnight: at the end", window: overnight, t: utcWall("2026-11-21 02:00")},
		{name: "overnight: midday", window: overnight, t: utcWall("2026-11-21 12:00")},

		{name: "days: Friday night", window: fridayNight, t: utcWall("2026-11-20 23:00"), wantEnd: utcWall("2026-11-21 02:00")},
		{name: "days: Saturday 01:00 belongs to Friday", window: fridayNight, t: utcWall("2026-11-21 01:00"), wantEnd: utcWall("2026-11-21 02:00")},
		{name: "days: not Saturday night", window: fridayNight, t: utcWall("2026-11-21 23:00")},
		{name: "days: not Sunday 01:00", window: fridayNight, t: utcWall("2026-11-22 01:00")},
		{name: "days: not Thursday night", window: fridayNight, t: utcWall("2026-11-19 23:00")},
		{name: "days: Friday 01:00 belongs to Thursday", window: fridayNight, t: utcWall("2026-11-20 01:00")},
		{name: "days: a weekday", window: weekdays, t: utcWall("2026-11-16 10:00"), wantEnd: utcWall("2026-11-16 17:00")},
		{name: "days: not the weekend", window: weekdays, t: utcWall("2026-11-21 10:00")},

		// 09:00-17:00 CET is 08:00-16:00 UTC.
		{
			name: "Berlin", window: parsedWindow("09:00", "17:00", nil, "Europe/Berlin"),
			t: utcWall("2026-11-20 08:30"), wantEnd: utcWall("2026-11-20 16:00"),
		},
		{name: "Berlin: UTC 16:30 is 17:30", window: parsedWindow("09:00", "17:00", nil, "Europe/Berlin"), t: utcWall("2026-11-20 16:30")},
		// 09:00-17:00 EST is 14:00-22:00 UTC.
		{
			name: "New York", window: parsedWindow("09:00", "17:00", nil, "America/New_York"),
			t: utcWall("2026-11-20 21:59"), wantEnd: utcWall("2026-11-20 22:00"),
		},
		{name: "New York: UTC 13:59 is 08:59", window: parsedWindow("09:00", "17:00", nil, "America/New_York"), t: utcWall("2026-11-20 13:59")},
		// 09:00-17:00 IST (+05:30) is 03:30-11:30 UTC.
		{
			name: "Kolkata: at the start", window: parsedWindow("09:00", "17:00", nil, "Asia/Kolkata"),
			t: utcWall("2026-11-20 03:30"), wantEnd: utcWall("2026-11-20 11:30"),
		},
		{name: "Kolkata: a minute early", window: parsedWindow("09:00", "17:00", nil, "Asia/Kolkata"), t: utcWall("2026-11-20 03:29")},
		// 23:00-01:00 IST on Friday is Friday 17:30 to 19:30 UTC, all on Friday in UTC.
		{
			name: "Kolkata: overnight on Friday", window: parsedWindow("23:00", "01:00", []string{"Fri"}, "Asia/Kolkata"),
			t: utcWall("2026-11-20 19:00"), wantEnd: utcWall("2026-11-20 19:30"),
		},
		{
			name: "Kolkata: overnight on Friday, not Thursday's", window: parsedWindow("23:00", "01:00", []string{"Fri"}, "Asia/Kolkata"),
			t: utcWall("2026-11-19 19:00"),
		},

		// A window is read in its own zone whatever the zone of t: Saturday 01:00 in Auckland is
		// Friday 02:00 in Honolulu, outside a 22:00-02:00 window read there.
		{
			name: "Auckland overnight at 23:30", window: parsedWindow("22:00", "02:00", nil, "Pacific/Auckland"),
			t: wallClock(windowZones.auckland, "2026-11-20 23:30").In(windowZones.honolulu), wantEnd: wallClock(windowZones.auckland, "2026-11-21 02:00"),
		},
		{
			name: "Auckland overnight at 01:00", window: parsedWindow("22:00", "02:00", nil, "Pacific/Auckland"),
			t: wallClock(windowZones.auckland, "2026-11-21 01:00").In(windowZones.honolulu), wantEnd: wallClock(windowZones.auckland, "2026-11-21 02:00"),
		},
		{
			name: "Auckland Friday night at 01:00 on Saturday", window: parsedWindow("22:00", "02:00", []string{"Fri"}, "Pacific/Auckland"),
			t: wallClock(windowZones.auckland, "2026-11-21 01:00").In(windowZones.honolulu), wantEnd: wallClock(windowZones.auckland, "2026-11-21 02:00"),
		},
		{
			name: "Auckland Saturday night not at 01:00 on Saturday", window: parsedWindow("22:00", "02:00", []string{"Sat"}, "Pacific/Auckland"),
			t: wallClock(windowZones.auckland, "2026-11-21 01:00").In(windowZones.honolulu),
		},
		{
			name: "Honolulu overnight at 23:30", window: parsedWindow("22:00", "02:00", nil, "Pacific/Honolulu"),
			t: wallClock(windowZones.honolulu, "2026-11-20 23:30").In(windowZones.auckland), wantEnd: wallClock(windowZones.honolulu, "2026-11-21 02:00"),
		},
		{
			name: "Honolulu Friday night at 01:00 on Saturday", window: parsedWindow("22:00", "02:00", []string{"Fri"}, "Pacific/Honolulu"),
			t: wallClock(windowZones.honolulu, "2026-11-21 01:00").In(windowZones.auckland), wantEnd: wallClock(windowZones.honolulu, "2026-11-21 02:00"),
		},
		{
			name: "Honolulu Friday night not at 23:30 on Saturday", window: parsedWindow("22:00", "02:00", []string{"Fri"}, "Pacific/Honolulu"),
			t: wallClock(windowZones.honolulu, "2026-11-21 23:30").In(windowZones.auckland),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The answer depends on the instant only, not on the zone t is given in.
			for _, loc := range []*time.Location{tt.t.Location(), time.UTC, windowZones.berlin, windowZones.newYork, windowZones.kolkata, windowZones.auckland, windowZones.honolulu} {
				end, ok := tt.window.Covering(tt.t.In(loc))
				if ok != !tt.wantEnd.IsZero() || !end.Equal(tt.wantEnd) {
					t.Fatalf("Covering(%v) = %v, %v; want %v, %v", tt.t.In(loc), end, ok, tt.wantEnd, !tt.wantEnd.IsZero())
				}
			}
		})
	}
}

func TestNextStart(t *testing.T) {
	nineToFive := parsedWindow("09:00", "17:00", nil, "")
	mondays := parsedWindow("09:00", "17:00", []string{"Mon"}, "")
	fridayNight := parsedWindow("22:00", "02:00", []string{"Fri"}, "")
	tests := []struct {
		name   string
		window Window
		t      time.Time
		want   time.Time
	}{
		{name: "later today", window: nineToFive, t: utcWall("2026-11-20 08:00"), want: utcWall("2026-11-20 09:00")},
		{name: "strictly after: at a start", window: nineToFive, t: utcWall("2026-11-20 09:00"), want: utcWall("2026-11-21 09:00")},
		{
			name: "just before a start", window: nineToFive, t: utcWall("2026-11-20 09:00").Add(-time.Nanosecond),
			want: utcWall("2026-11-20 09:00"),
		},
		{name: "inside: tomorrow", window: nineToFive, t: utcWall("2026-11-20 12:00"), want: utcWall("2026-11-21 09:00")},
		{name: "a week away", window: mondays, t: utcWall("2026-11-16 09:00"), want: utcWall("2026-11-23 09:00")},
		{name: "six days away", window: mondays, t: utcWall("2026-11-17 00:00"), want: utcWall("2026-11-23 09:00")},
		{name: "today's", window: mondays, t: utcWall("2026-11-16 08:59"), want: utcWall("2026-11-16 09:00")},
		{name: "overnight, from inside it", window: fridayNight, t: utcWall("2026-11-21 01:00"), want: utcWall("2026-11-27 22:00")},
		{name: "overnight, from Thursday night", window: fridayNight, t: utcWall("2026-11-19 23:00"), want: utcWall("2026-11-20 22:00")},
		{
			name: "Kolkata", window: parsedWindow("09:00", "17:00", nil, "Asia/Kolkata"),
			t: utcWall("2026-11-20 03:30"), want: utcWall("2026-11-21 03:30"),
		},
		{
			name: "Auckland's Saturday is Honolulu's Friday", window: parsedWindow("01:00", "02:00", []string{"Sat"}, "Pacific/Auckland"),
			t: wallClock(windowZones.honolulu, "2026-11-20 00:00"), want: wallClock(windowZones.auckland, "2026-11-21 01:00"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, loc := range []*time.Location{time.UTC, windowZones.berlin, windowZones.auckland, windowZones.honolulu} {
				if got := tt.window.NextStart(tt.t.In(loc)); !got.Equal(tt.want) {
					t.Fatalf("NextStart(%v) = %v, want %v", tt.t.In(loc), got, tt.want)
				}
			}
		})
	}
}

// TestWindowDaylightSaving pins what a window does on the days Europe/Berlin changes its clocks
// (2026-03-29: 02:00 CET jumps to 03:00 CEST at 01:00 UTC; 2026-10-25: 03:00 CEST goes back to
// 02:00 CET at 01:00 UTC), as the godoc of Window describes, and a fall-back in America/New_York
// for contrast. Instants are in UTC.
func TestWindowDaylightSaving(t *testing.T) {
	early := parsedWindow("01:30", "03:30", nil, "Europe/Berlin")
	inside := parsedWindow("02:30", "03:00", nil, "Europe/Berlin")
	newYorkRepeated := parsedWindow("01:15", "01:45", nil, "America/New_York")
	tests := []struct {
		name          string
		window        Window
		t             time.Time
		wantEnd       time.Time // zero: t is outside every occurrence
		wantNextStart time.Time
	}{
		// Spring forward: 01:30 CET to 03:30 CEST lasts an hour, 00:30-01:30 UTC.
		{
			name: "spring, 01:30-03:30: a minute before", window: early, t: utcWall("2026-03-29 00:29"),
			wantNextStart: utcWall("2026-03-29 00:30"),
		},
		{
			name: "spring, 01:30-03:30: at 01:30 CET", window: early, t: utcWall("2026-03-29 00:30"),
			wantEnd: utcWall("2026-03-29 01:30"), wantNextStart: utcWall("2026-03-29 23:30"),
		},
		{
			name: "spring, 01:30-03:30: at 03:29 CEST", window: early, t: utcWall("2026-03-29 01:29"),
			wantEnd: utcWall("2026-03-29 01:30"), wantNextStart: utcWall("2026-03-29 23:30"),
		},
		{
			name: "spring, 01:30-03:30: at 03:30 CEST", window: early, t: utcWall("2026-03-29 01:30"),
			wantNextStart: utcWall("2026-03-29 23:30"),
		},
		// Spring forward: 02:30-03:00 does not exist that day. 02:30 is normalised to 03:30
		// CEST, after the end at 03:00 CEST, so the day has no occurrence and the next one is on
		// 2026-03-30 at 02:30 CEST, 00:30 UTC.
		{
			name: "spring, 02:30-03:00: the day before", window: inside, t: utcWall("2026-03-28 01:45"),
			wantEnd: utcWall("2026-03-28 02:00"), wantNextStart: utcWall("2026-03-30 00:30"),
		},
		{
			name: "spring, 02:30-03:00: at 03:00 CEST", window: inside, t: utcWall("2026-03-29 01:00"),
			wantNextStart: utcWall("2026-03-30 00:30"),
		},
		{
			name: "spring, 02:30-03:00: at 03:30 CEST", window: inside, t: utcWall("2026-03-29 01:30"),
			wantNextStart: utcWall("2026-03-30 00:30"),
		},
		// Fall back: 01:30 CEST to 03:30 CET lasts three hours, 23:30-02:30 UTC.
		{
			name: "fall, 01:30-03:30: at 01:30 CEST", window: early, t: utcWall("2026-10-24 23:30"),
			wantEnd: utcWall("2026-10-25 02:30"), wantNextStart: utcWall("2026-10-26 00:30"),
		},
		{
			name: "fall, 01:30-03:30: at the first 02:45 (CEST)", window: early, t: utcWall("2026-10-25 00:45"),
			wantEnd: utcWall("2026-10-25 02:30"), wantNextStart: utcWall("2026-10-26 00:30"),
		},
		{
			name: "fall, 01:30-03:30: at 03:29 CET", window: early, t: utcWall("2026-10-25 02:29"),
			wantEnd: utcWall("2026-10-25 02:30"), wantNextStart: utcWall("2026-10-26 00:30"),
		},
		// Fall back: 02:30 happens twice; time.Date reads it as the second, 02:30 CET, so the
		// window covers 01:30-02:00 UTC only and the first 02:30-03:00 (CEST) is not blacked out.
		{
			name: "fall, 02:30-03:00: the first 02:45 (CEST)", window: inside, t: utcWall("2026-10-25 00:45"),
			wantNextStart: utcWall("2026-10-25 01:30"),
		},
		{
			name: "fall, 02:30-03:00: the second 02:30 (CET)", window: inside, t: utcWall("2026-10-25 01:30"),
			wantEnd: utcWall("2026-10-25 02:00"), wantNextStart: utcWall("2026-10-26 01:30"),
		},
		{
			name: "fall, 02:30-03:00: at 03:00 CET", window: inside, t: utcWall("2026-10-25 02:00"),
			wantNextStart: utcWall("2026-10-26 01:30"),
		},
		// New York falls back on 2026-11-01 (01:59 EDT is followed by 01:00 EST); there time.Date
		// reads 01:15 and 01:45 as the first, EDT ones: 05:15-05:45 UTC.
		{
			name: "New York fall: the first 01:30 (EDT)", window: newYorkRepeated, t: utcWall("2026-11-01 05:30"),
			wantEnd: utcWall("2026-11-01 05:45"), wantNextStart: utcWall("2026-11-02 06:15"),
		},
		{
			name: "New York fall: the second 01:30 (EST)", window: newYorkRepeated, t: utcWall("2026-11-01 06:30"),
			wantNextStart: utcWall("2026-11-02 06:15"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			end, ok := tt.window.Covering(tt.t)
			if ok != !tt.wantEnd.IsZero() || !end.Equal(tt.wantEnd) {
				t.Fatalf("Covering(%v) = %v, %v; want %v, %v", tt.t, end, ok, tt.wantEnd, !tt.wantEnd.IsZero())
			}
			if got := tt.window.NextStart(tt.t); !got.Equal(tt.wantNextStart) {
				t.Fatalf("NextStart(%v) = %v, want %v", tt.t, got.UTC(), tt.wantNextStart)
			}
		})
	}
}

// A daylight-saving gap can stretch an occurrence until it overlaps the next one of the same
// window: 03:10-02:50 in Europe/Berlin runs from 2026-03-28 03:10 CET to 02:50 on the 29th, which
// is normalised to 03:50 CEST, after the next occurrence opened at 03:10 CEST. Covering gives the
// later end and Overruns the earlier start.
func TestWindowStretchedOverlap(t *testing.T) {
	w := withAvoidOverrun(parsedWindow("03:10", "02:50", nil, "Europe/Berlin"))
	at := utcWall("2026-03-29 01:20") // 03:20 CEST, inside both
	end, ok := w.Covering(at)
	if want := utcWall("2026-03-30 00:50"); !ok || !end.Equal(want) {
		t.Fatalf("Covering(%v) = %v, %v; want %v, true", at, end, ok, want)
	}
	start, ok := Windows{w}.Overruns(at, time.Minute)
	if want := utcWall("2026-03-28 02:10"); !ok || !start.Equal(want) {
		t.Fatalf("Overruns(%v, 1m) = %v, %v; want %v, true", at, start, ok, want)
	}
}

func TestZeroWindow(t *testing.T) {
	var w Window
	at := utcWall("2026-11-20 12:00")
	if end, ok := w.Covering(at); ok {
		t.Fatalf("the zero Window covers %v until %v", at, end)
	}
	if next := w.NextStart(at); !next.IsZero() {
		t.Fatalf("the zero Window starts at %v", next)
	}
	w.StopRunning, w.AvoidOverrun = true, true
	ws := Windows{w}
	if free, inside := ws.FreeAt(at); inside || !free.Equal(at) {
		t.Fatalf("FreeAt() = %v, %v; want %v, false", free, inside, at)
	}
	if next, ok := ws.NextStopAfter(at); ok {
		t.Fatalf("NextStopAfter() = %v, true; want false", next)
	}
	if start, ok := ws.Overruns(at, 48*time.Hour); ok {
		t.Fatalf("Overruns() = %v, true; want false", start)
	}
}

func TestFreeAt(t *testing.T) {
	nineToNoon := parsedWindow("09:00", "12:00", nil, "")
	elevenToTwo := parsedWindow("11:00", "14:00", nil, "")
	noonToTwo := parsedWindow("12:00", "14:00", nil, "")
	tests := []struct {
		name       string
		windows    Windows
		t          time.Time
		want       time.Time
		wantInside bool
	}{
		{name: "no windows", t: utcWall("2026-11-20 10:00"), want: utcWall("2026-11-20 10:00")},
		{name: "outside", windows: Windows{nineToNoon}, t: utcWall("2026-11-20 08:00"), want: utcWall("2026-11-20 08:00")},
		{name: "at the end", windows: Windows{nineToNoon}, t: utcWall("2026-11-20 12:00"), want: utcWall("2026-11-20 12:00")},
		{
			name: "inside one", windows: Windows{nineToNoon}, t: utcWall("2026-11-20 09:00"),
			want: utcWall("2026-11-20 12:00"), wantInside: true,
		},
		{
			name: "overlapping", windows: Windows{nineToNoon, elevenToTwo}, t: utcWall("2026-11-20 10:00"),
			want: utcWall("2026-11-20 14:00"), wantInside: true,
		},
		{
			name: "overlapping, the later one listed first", windows: Windows{elevenToTwo, nineToNoon}, t: utcWall("2026-11-20 10:00"),
			want: utcWall("2026-11-20 14:00"), wantInside: true,
		},
		{
			name: "touching", windows: Windows{noonToTwo, nineToNoon}, t: utcWall("2026-11-20 10:00"),
			want: utcWall("2026-11-20 14:00"), wantInside: true,
		},
		{
			name: "a minute apart", windows: Windows{nineToNoon, parsedWindow("12:01", "14:00", nil, "")}, t: utcWall("2026-11-20 10:00"),
			want: utcWall("2026-11-20 12:00"), wantInside: true,
		},
		{
			name:    "touching across midnight, the first one's days allowing",
			windows: Windows{parsedWindow("22:00", "02:00", []string{"Fri"}, ""), parsedWindow("02:00", "06:00", []string{"Sat"}, "")},
			t:       utcWall("2026-11-20 23:00"), want: utcWall("2026-11-21 06:00"), wantInside: true,
		},
		{
			name:    "touching in different zones",
			windows: Windows{parsedWindow("09:00", "12:00", nil, "Europe/Berlin"), parsedWindow("11:00", "13:00", nil, "")},
			t:       utcWall("2026-11-20 08:30"), want: utcWall("2026-11-20 13:00"), wantInside: true,
		},
		{
			name:    "a chain of three",
			windows: Windows{parsedWindow("13:00", "15:00", nil, ""), noonToTwo, nineToNoon},
			t:       utcWall("2026-11-20 09:30"), want: utcWall("2026-11-20 15:00"), wantInside: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			free, inside := tt.windows.FreeAt(tt.t)
			if inside != tt.wantInside || !free.Equal(tt.want) {
				t.Fatalf("FreeAt(%v) = %v, %v; want %v, %v", tt.t, free, inside, tt.want, tt.wantInside)
			}
		})
	}
}

func TestFreeAtNeverFree(t *testing.T) {
	ws := Windows{parsedWindow("00:00", "12:00", nil, ""), parsedWindow("12:00", "00:00", nil, "Europe/Berlin"), parsedWindow("23:00", "00:00", nil, "")}
	at := utcWall("2026-11-20 10:00")
	free, inside := ws.FreeAt(at)
	if !inside || !free.After(at.Add(8*24*time.Hour)) || free.After(at.Add(9*24*time.Hour)) {
		t.Fatalf("FreeAt(%v) = %v, %v; want a still blacked-out instant a little over eight days later, true", at, free, inside)
	}
	if again, inside := ws.FreeAt(free); !inside || !again.After(free) {
		t.Fatalf("FreeAt(%v) = %v, %v; want a later instant, true", free, again, inside)
	}
}

func TestNextStopAfter(t *testing.T) {
	at := utcWall("2026-11-20 10:00")
	tests := []struct {
		name    string
		windows Windows
		t       time.Time
		want    time.Time // zero: no stop
	}{
		{name: "no windows", t: at},
		{name: "no window stops", windows: Windows{parsedWindow("11:00", "12:00", nil, "")}, t: at},
		{name: "one", windows: Windows{withStopRunning(parsedWindow("11:00", "12:00", nil, ""))}, t: at, want: utcWall("2026-11-20 11:00")},
		{
			name:    "the earliest stopping one",
			windows: Windows{withStopRunning(parsedWindow("15:00", "16:00", nil, "")), parsedWindow("10:30", "12:00", nil, ""), withStopRunning(parsedWindow("11:00", "12:00", nil, "Europe/Berlin"))},
			t:       at, want: utcWall("2026-11-20 15:00"),
		},
		{
			name:    "strictly after: inside one that just opened",
			windows: Windows{withStopRunning(parsedWindow("10:00", "12:00", nil, ""))},
			t:       at, want: utcWall("2026-11-21 10:00"),
		},
		{
			name:    "another day",
			windows: Windows{withStopRunning(parsedWindow("22:00", "02:00", []string{"Sun"}, "America/New_York"))},
			t:       at, want: wallClock(windowZones.newYork, "2026-11-22 22:00"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.windows.NextStopAfter(tt.t)
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Fatalf("NextStopAfter(%v) = %v, %v; want %v, %v", tt.t, got, ok, tt.want, !tt.want.IsZero())
			}
		})
	}
}

func TestOverruns(t *testing.T) {
	noon := withAvoidOverrun(parsedWindow("12:00", "13:00", nil, ""))
	mondayNoon := withAvoidOverrun(parsedWindow("12:00", "13:00", []string{"Mon"}, ""))
	tests := []struct {
		name    string
		windows Windows
		start   time.Time
		d       time.Duration
		want    time.Time // zero: no overrun
	}{
		{name: "no windows", start: utcWall("2026-11-20 11:00"), d: 48 * time.Hour},
		{name: "ends before", windows: Windows{noon}, start: utcWall("2026-11-20 11:00"), d: 59 * time.Minute},
		{name: "ends exactly at the start", windows: Windows{noon}, start: utcWall("2026-11-20 11:00"), d: time.Hour},
		{
			name: "a nanosecond into it", windows: Windows{noon}, start: utcWall("2026-11-20 11:00"), d: time.Hour + time.Nanosecond,
			want: utcWall("2026-11-20 12:00"),
		},
		{
			name: "across it", windows: Windows{noon}, start: utcWall("2026-11-20 11:00"), d: 3 * time.Hour,
			want: utcWall("2026-11-20 12:00"),
		},
		{
			name: "starting inside it", windows: Windows{noon}, start: utcWall("2026-11-20 12:30"), d: time.Minute,
			want: utcWall("2026-11-20 12:00"),
		},
		{name: "starting at its end", windows: Windows{noon}, start: utcWall("2026-11-20 13:00"), d: 23 * time.Hour},
		{
			name: "into tomorrow's", windows: Windows{noon}, start: utcWall("2026-11-20 13:00"), d: 23*time.Hour + time.Minute,
			want: utcWall("2026-11-21 12:00"),
		},
		{name: "zero duration", windows: Windows{noon}, start: utcWall("2026-11-20 12:30")},
		{name: "negative duration", windows: Windows{noon}, start: utcWall("2026-11-20 11:00"), d: -time.Hour},
		{name: "a window without AvoidOverrun", windows: Windows{parsedWindow("12:00", "13:00", nil, "")}, start: utcWall("2026-11-20 11:00"), d: 3 * time.Hour},
		{name: "over the weekend", windows: Windows{mondayNoon}, start: utcWall("2026-11-20 13:00"), d: 71 * time.Hour},
		{
			name: "into Monday", windows: Windows{mondayNoon}, start: utcWall("2026-11-20 13:00"), d: 71*time.Hour + time.Second,
			want: utcWall("2026-11-23 12:00"),
		},
		{
			name:    "the earliest of several",
			windows: Windows{withAvoidOverrun(parsedWindow("15:00", "16:00", nil, "")), noon, withAvoidOverrun(parsedWindow("12:00", "13:00", nil, "Asia/Kolkata"))},
			start:   utcWall("2026-11-20 11:00"), d: 5 * time.Hour,
			want: utcWall("2026-11-20 12:00"),
		},
		{
			name:    "in Kolkata",
			windows: Windows{withAvoidOverrun(parsedWindow("12:00", "13:00", nil, "Asia/Kolkata"))},
			start:   utcWall("2026-11-20 06:00"), d: 31 * time.Minute,
			want: utcWall("2026-11-20 06:30"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.windows.Overruns(tt.start, tt.d)
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Fatalf("Overruns(%v, %v) = %v, %v; want %v, %v", tt.start, tt.d, got, ok, tt.want, !tt.want.IsZero())
			}
		})
	}
}

// TestWindowExtremeTimes checks that no instant, however far from now, makes a window panic or
// loop.
func TestWindowExtremeTimes(t *testing.T) {
	ws := Windows{
		withStopRunning(withAvoidOverrun(parsedWindow("22:00", "02:00", []string{"Fri"}, "Europe/Berlin"))),
		withStopRunning(withAvoidOverrun(parsedWindow("00:00", "23:59", nil, ""))),
	}
	for _, at := range []time.Time{
		{},
		time.Unix(0, 0),
		time.Date(-4000, 1, 1, 0, 0, 0, 0, windowZones.kolkata),
		time.Date(1000000, 12, 31, 23, 59, 59, 999999999, windowZones.auckland),
		time.Unix(1<<40, 0),
		time.Unix(-1<<40, 0),
	} {
		for _, w := range ws {
			if end, ok := w.Covering(at); ok && !end.After(at) {
				t.Fatalf("Covering(%v) = %v, true: the end is not after t", at, end)
			}
			if next := w.NextStart(at); !next.After(at) {
				t.Fatalf("NextStart(%v) = %v: not after t", at, next)
			}
		}
		if free, _ := ws.FreeAt(at); free.Before(at) {
			t.Fatalf("FreeAt(%v) = %v: before t", at, free)
		}
		if next, ok := ws.NextStopAfter(at); !ok || !next.After(at) {
			t.Fatalf("NextStopAfter(%v) = %v, %v: want a later instant, true", at, next, ok)
		}
		ws.Overruns(at, 1<<62)
	}
}

// FuzzParseWindow checks that ParseWindow never panics, and that a window it accepts behaves: an
// occurrence covering t ends after t, the next one starts after t and covers its start, and FreeAt
// returns an instant outside the window.
func FuzzParseWindow(f *testing.F) {
	f.Add("22:00", "02:00", "Fri", "Europe/Berlin", int64(1774746000))
	f.Add("01:30", "03:30", "", "Europe/Berlin", int64(1774747800))
	f.Add("02:30", "03:00", "Sun", "Europe/Berlin", int64(1792891800))
	f.Add("09:00", "17:00", "Mon,Tue,Wed,Thu,Fri", "America/New_York", int64(1795000000))
	f.Add("23:00", "01:00", "Sat,Sun", "Asia/Kolkata", int64(0))
	f.Add("00:00", "23:59", "", "Australia/Lord_Howe", int64(-1))
	f.Add("22:00", "02:00", "", "Pacific/Apia", int64(1325239200))
	f.Add("25:00", "7:00", "Monday", "Mars/Olympus", int64(42))
	f.Fuzz(func(t *testing.T, start, end, days, timeZone string, seconds int64) {
		var dayList []string
		if days != "" {
			dayList = strings.Split(days, ",")
		}
		w, err := ParseWindow(start, end, dayList, timeZone)
		spec := fmt.Sprintf("window %q-%q days %q zone %q", start, end, dayList, timeZone)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("ParseWindow() returned an empty error")
			}
			return
		}
		// Instants between the years 1900 and 2500.
		const base, span = -2208988800, 600 * 365 * 24 * 60 * 60
		at := time.Unix(base+(seconds%span+span)%span, 0)
		coverEnd, covered := w.Covering(at)
		if covered && !coverEnd.After(at) {
			t.Fatalf("%s: Covering(%v) = %v, true: the end is not after t", spec, at, coverEnd)
		}
		next := w.NextStart(at)
		if !next.After(at) {
			t.Fatalf("%s: NextStart(%v) = %v: not after t", spec, at, next)
		}
		if _, ok := w.Covering(next); !ok {
			t.Fatalf("%s: Covering(NextStart(%v) = %v) = false", spec, at, next)
		}
		free, inside := Windows{w}.FreeAt(at)
		if inside != covered || free.Before(at) {
			t.Fatalf("%s: FreeAt(%v) = %v, %v; Covering() = %v", spec, at, free, inside, covered)
		}
		if _, ok := w.Covering(free); ok {
			t.Fatalf("%s: FreeAt(%v) = %v, which the window covers", spec, at, free)
		}
	})
}
