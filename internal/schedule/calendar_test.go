package schedule

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// parsedCalendar parses a calendar spec that the test knows to be valid.
func parsedCalendar(expr, timeZone string, jitter time.Duration) Calendar {
	c, err := ParseCalendar(expr, timeZone, jitter, "ns/group/uid-1")
	if err != nil {
		panic(err)
	}
	return c
}

// ticksFrom lists the first n ticks after from.
func ticksFrom(c Calendar, from time.Time, n int) []time.Time {
	var ticks []time.Time
	t := from
	for range n {
		next, ok := c.NextTick(t)
		if !ok {
			break
		}
		ticks = append(ticks, next)
		t = next
	}
	return ticks
}

func TestParseCalendarErrors(t *testing.T) {
	tests := []struct {
		name, expr, timeZone string
		jitter               time.Duration
		want                 string
	}{
		{name: "minute out of range", expr: "61 * * * *", want: `schedule "61 * * * *": end of range (61) above maximum (59): 61`},
		{name: "four fields", expr: "0 1 * *", want: `schedule "0 1 * *" is not a cron expression of five fields or one of @yearly, @monthly, @weekly, @daily, @hourly`},
		{name: "six fields", expr: "0 0 1 * * *", want: `schedule "0 0 1 * * *" is not a cron expression of five fields or one of @yearly, @monthly, @weekly, @daily, @hourly`},
		{name: "@every is frequency's job", expr: "@every 1h", want: `schedule "@every 1h" is not a cron expression of five fields or one of @yearly, @monthly, @weekly, @daily, @hourly`},
		{name: "a zone inside the expression", expr: "TZ=Europe/Berlin 0 1 * * *", want: `schedule "TZ=Europe/Berlin 0 1 * * *" is not a cron expression of five fields or one of @yearly, @monthly, @weekly, @daily, @hourly`},
		{name: "unknown month name", expr: "0 1 * foo *", want: `schedule "0 1 * foo *": failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax`},
		{name: "a date that never comes", expr: "0 0 30 2 *", want: `schedule "0 0 30 2 *" matches no date`},
		{name: "longer than the API allows", expr: "0 0 * * " + strings.Repeat("1,", 60) + "1", want: `schedule "0 0 * * ` + strings.Repeat("1,", 60) + `1" is longer than 128 characters`},
		{name: "unknown zone", expr: "@daily", timeZone: "Mars/Olympus", want: `scheduleTimeZone "Mars/Olympus": unknown time zone Mars/Olympus`},
		{name: "the host's zone", expr: "@daily", timeZone: "Local", want: `scheduleTimeZone "Local" is not an IANA time zone name`},
		{name: "negative jitter", expr: "@daily", jitter: -time.Second, want: "jitter cannot be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCalendar(tt.expr, tt.timeZone, tt.jitter, "ns/g/uid")
			if err == nil || err.Error() != tt.want {
				t.Fatalf("ParseCalendar() error = %v, want %q", err, tt.want)
			}
			if !c.IsZero() {
				t.Fatal("ParseCalendar() returned a calendar with its error")
			}
		})
	}
	_, err := ParseCalendar("@daily", "Mars/Olympus", 0, "")
	if errors.Unwrap(err) == nil {
		t.Fatal("the time zone error does not wrap time.LoadLocation's")
	}
}

func TestNextTickAndPrevTick(t *testing.T) {
	berlin, newYork := windowZones.berlin, windowZones.newYork
	tests := []struct {
		name     string
		expr     string
		timeZone string
		from     time.Time
		want     []time.Time
	}{
		{
			name: "@daily in UTC", expr: "@daily", from: utcWall("2026-11-20 12:00"),
			want: []time.Time{utcWall("2026-11-21 00:00"), utcWall("2026-11-22 00:00")},
		},
		{
			name: "@hourly", expr: "@hourly", from: utcWall("2026-11-20 12:00"),
			want: []time.Time{utcWall("2026-11-20 13:00"), utcWall("2026-11-20 14:00")},
		},
		{
			name: "@weekly is Sunday midnight", expr: "@weekly", from: utcWall("2026-11-20 12:00"),
			want: []time.Time{utcWall("2026-11-22 00:00"), utcWall("2026-11-29 00:00")},
		},
		{
			name: "@monthly", expr: "@monthly", from: utcWall("2026-11-20 12:00"),
			want: []time.Time{utcWall("2026-12-01 00:00"), utcWall("2027-01-01 00:00")},
		},
		{
			name: "@yearly", expr: "@yearly", from: utcWall("2026-11-20 12:00"),
			want: []time.Time{utcWall("2027-01-01 00:00"), utcWall("2028-01-01 00:00")},
		},
		{
			name: "weekdays at 01:00 in Berlin (CET)", expr: "0 1 * * Mon-Fri", timeZone: "Europe/Berlin",
			from: utcWall("2026-11-20 12:00"), // Friday
			want: []time.Time{wallClock(berlin, "2026-11-23 01:00"), wallClock(berlin, "2026-11-24 01:00")},
		},
		{
			name: "leap day", expr: "0 0 29 2 *", from: utcWall("2026-11-20 12:00"),
			want: []time.Time{utcWall("2028-02-29 00:00"), utcWall("2032-02-29 00:00")},
		},

		// Europe/Berlin springs forward on 2026-03-29: 02:00 CET (01:00 UTC) is 03:00 CEST.
		{
			name: "Berlin spring: 02:30 runs once at 03:00 CEST", expr: "30 2 * * *", timeZone: "Europe/Berlin",
			from: utcWall("2026-03-28 12:00"),
			want: []time.Time{utcWall("2026-03-29 01:00"), utcWall("2026-03-30 00:30")},
		},
		{
			name: "Berlin spring: four ticks in the gap and 03:00 are one", expr: "*/15 2,3 * * *", timeZone: "Europe/Berlin",
			from: utcWall("2026-03-29 00:50"),
			want: []time.Time{utcWall("2026-03-29 01:00"), utcWall("2026-03-29 01:15"), utcWall("2026-03-29 01:30")},
		},
		{
			name: "Berlin spring: 01:59 and 03:01 are not moved", expr: "59 1 * * *", timeZone: "Europe/Berlin",
			from: utcWall("2026-03-28 12:00"),
			want: []time.Time{utcWall("2026-03-29 00:59"), utcWall("2026-03-29 23:59")},
		},
		// Europe/Berlin falls back on 2026-10-25: 03:00 CEST (01:00 UTC) is 02:00 CET.
		{
			name: "Berlin fall: 02:30 runs once, at 02:30 CEST", expr: "30 2 * * *", timeZone: "Europe/Berlin",
			from: utcWall("2026-10-24 12:00"),
			want: []time.Time{utcWall("2026-10-25 00:30"), utcWall("2026-10-26 01:30")},
		},
		{
			name: "Berlin fall: hourly runs each wall-clock hour once", expr: "0 * * * *", timeZone: "Europe/Berlin",
			from: utcWall("2026-10-24 23:30"),
			want: []time.Time{
				utcWall("2026-10-25 00:00"), // 02:00 CEST
				utcWall("2026-10-25 02:00"), // 03:00 CET; the second 02:00 (01:00 UTC) is the same tick
				utcWall("2026-10-25 03:00"),
			},
		},
		// America/New_York springs forward on 2026-03-08 (02:00 EST is 03:00 EDT, 07:00 UTC) and
		// falls back on 2026-11-01 (02:00 EDT is 01:00 EST, 06:00 UTC).
		{
			name: "New York spring: 02:30 runs once at 03:00 EDT", expr: "30 2 * * *", timeZone: "America/New_York",
			from: utcWall("2026-03-07 12:00"),
			want: []time.Time{utcWall("2026-03-08 07:00"), utcWall("2026-03-09 06:30")},
		},
		{
			name: "New York fall: 01:30 runs once, at 01:30 EDT", expr: "30 1 * * *", timeZone: "America/New_York",
			from: utcWall("2026-10-31 12:00"),
			want: []time.Time{utcWall("2026-11-01 05:30"), utcWall("2026-11-02 06:30")},
		},
		{
			name: "New York fall: from inside the repeated hour, the next day's tick", expr: "30 1 * * *", timeZone: "America/New_York",
			from: utcWall("2026-11-01 06:10"), // 01:10 EST, after the first 01:30
			want: []time.Time{utcWall("2026-11-02 06:30")},
		},
		{
			name: "New York fall: every 20 minutes skips the repeated hour's second pass", expr: "*/20 1 * * *", timeZone: "America/New_York",
			from: utcWall("2026-11-01 04:50"),
			want: []time.Time{
				wallClock(newYork, "2026-11-01 00:50").Add(10 * time.Minute), // 01:00 EDT
				utcWall("2026-11-01 05:20"), utcWall("2026-11-01 05:40"),
				utcWall("2026-11-02 06:00"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parsedCalendar(tt.expr, tt.timeZone, 0)
			got := ticksFrom(c, tt.from, len(tt.want))
			if len(got) != len(tt.want) {
				t.Fatalf("ticks = %v, want %v", got, tt.want)
			}
			for i := range got {
				if !got[i].Equal(tt.want[i]) {
					t.Fatalf("tick %d = %s, want %s (all: %v)", i, got[i].UTC(), tt.want[i].UTC(), got)
				}
			}
			// PrevTick is NextTick's inverse: each tick is its own previous tick, and the
			// previous tick of the second before it is the one before.
			for i, tick := range got {
				if prev, ok := c.PrevTick(tick); !ok || !prev.Equal(tick) {
					t.Fatalf("PrevTick(%s) = %s, %v; want the tick itself", tick.UTC(), prev.UTC(), ok)
				}
				if i == 0 {
					continue
				}
				if prev, ok := c.PrevTick(tick.Add(-time.Second)); !ok || !prev.Equal(got[i-1]) {
					t.Fatalf("PrevTick(%s - 1s) = %s, %v; want %s", tick.UTC(), prev.UTC(), ok, got[i-1].UTC())
				}
			}
		})
	}
}

func TestPrevTickFarBack(t *testing.T) {
	c := parsedCalendar("0 0 29 2 *", "", 0)
	prev, ok := c.PrevTick(utcWall("2031-06-01 00:00"))
	if !ok || !prev.Equal(utcWall("2028-02-29 00:00")) {
		t.Fatalf("PrevTick() = %s, %v; want 2028-02-29 00:00", prev, ok)
	}
	if _, ok := (Calendar{}).PrevTick(utcWall("2031-06-01 00:00")); ok {
		t.Fatal("the zero Calendar has a tick")
	}
}

func TestDelay(t *testing.T) {
	hourly := parsedCalendar("@hourly", "", time.Hour)
	tick := utcWall("2026-11-20 01:00")
	first := hourly.Delay(tick)
	if first < 0 || first >= time.Hour || first%time.Second != 0 {
		t.Fatalf("Delay() = %s, want whole seconds in [0, 1h)", first)
	}
	// The same group and tick give the same delay; so does a calendar parsed again (a restart).
	if again := parsedCalendar("@hourly", "", time.Hour).Delay(tick); again != first {
		t.Fatalf("Delay() after a restart = %s, want %s", again, first)
	}
	// Delays spread: other groups and other ticks differ.
	seen := map[time.Duration]bool{}
	for i := range 50 {
		c, err := ParseCalendar("@hourly", "", time.Hour, "ns/group-"+string(rune('a'+i%26))+string(rune('a'+i/26))+"/uid")
		if err != nil {
			t.Fatal(err)
		}
		seen[c.Delay(tick)] = true
	}
	if len(seen) < 45 {
		t.Fatalf("50 groups got only %d different delays", len(seen))
	}
	// The delay stays below the time to the next tick, so rounds keep the order of their ticks.
	minutely := parsedCalendar("* * * * *", "", 24*time.Hour)
	for i := range 100 {
		if d := minutely.Delay(tick.Add(time.Duration(i) * time.Minute)); d >= time.Minute {
			t.Fatalf("Delay() = %s with a tick every minute", d)
		}
	}
	if d := parsedCalendar("@hourly", "", 0).Delay(tick); d != 0 {
		t.Fatalf("Delay() without jitter = %s", d)
	}
}

func TestRoundStart(t *testing.T) {
	created := utcWall("2026-11-18 15:00")
	daily := parsedCalendar("0 1 * * *", "Europe/Berlin", 0) // 00:00 UTC in November
	jittered := parsedCalendar("0 1 * * *", "Europe/Berlin", 30*time.Minute)
	delay := jittered.Delay(utcWall("2026-11-20 00:00"))
	if delay == 0 {
		t.Fatal("the test needs a tick with a delay; pick another identity")
	}
	tests := []struct {
		name      string
		c         Calendar
		now       time.Time
		wantStart time.Time // zero: no round
		wantNext  time.Time
	}{
		{
			name: "before the first tick after creation", c: daily, now: utcWall("2026-11-18 23:59"),
			wantNext: utcWall("2026-11-19 00:00"),
		},
		{
			name: "a tick before creation makes no round", c: daily, now: utcWall("2026-11-18 15:00"),
			wantNext: utcWall("2026-11-19 00:00"),
		},
		{
			name: "at a tick", c: daily, now: utcWall("2026-11-19 00:00"),
			wantStart: utcWall("2026-11-19 00:00"), wantNext: utcWall("2026-11-20 00:00"),
		},
		{
			name: "three ticks missed make one round, of the last", c: daily, now: utcWall("2026-11-22 09:00"),
			wantStart: utcWall("2026-11-22 00:00"), wantNext: utcWall("2026-11-23 00:00"),
		},
		{
			name: "jitter: before the delayed start the previous round goes on", c: jittered,
			now:       utcWall("2026-11-20 00:00").Add(delay - time.Second),
			wantStart: utcWall("2026-11-19 00:00").Add(jittered.Delay(utcWall("2026-11-19 00:00"))),
			wantNext:  utcWall("2026-11-20 00:00").Add(delay),
		},
		{
			name: "jitter: at the delayed start", c: jittered, now: utcWall("2026-11-20 00:00").Add(delay),
			wantStart: utcWall("2026-11-20 00:00").Add(delay),
			wantNext:  utcWall("2026-11-21 00:00").Add(jittered.Delay(utcWall("2026-11-21 00:00"))),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, ok := tt.c.RoundStart(tt.now, created)
			if ok != !tt.wantStart.IsZero() || !start.Equal(tt.wantStart) {
				t.Fatalf("RoundStart() = %s, %v; want %s", start, ok, tt.wantStart)
			}
			next, ok := tt.c.NextRoundStart(tt.now, created)
			if !ok || !next.Equal(tt.wantNext) {
				t.Fatalf("NextRoundStart() = %s, %v; want %s", next, ok, tt.wantNext)
			}
		})
	}
}

// A thousand groups scheduled at 01:00 with a jitter of 10 minutes start spread over the 600
// seconds: no second holds more than a handful of them. Without jitter they all start at 01:00.
func TestDelaySpreadsAThousandGroups(t *testing.T) {
	tick := utcWall("2026-11-21 01:00")
	perSecond := map[time.Duration]int{}
	for i := range 1000 {
		identity := "team-" + strconv.Itoa(i%7) + "/backup-" + strconv.Itoa(i) + "/uid-" + strconv.Itoa(i*7919)
		c, err := ParseCalendar("0 1 * * *", "", 10*time.Minute, identity)
		if err != nil {
			t.Fatal(err)
		}
		perSecond[c.Delay(tick)]++
		if plain, _ := ParseCalendar("0 1 * * *", "", 0, identity); plain.Delay(tick) != 0 {
			t.Fatal("a delay without jitter")
		}
	}
	busiest, earliest, latest := 0, 10*time.Minute, time.Duration(0)
	for d, n := range perSecond {
		busiest, earliest, latest = max(busiest, n), min(earliest, d), max(latest, d)
	}
	if len(perSecond) < 450 || busiest > 8 || earliest > 10*time.Second || latest < 590*time.Second {
		t.Fatalf("1000 starts over %d distinct seconds from %s to %s, at most %d in one second", len(perSecond), earliest, latest, busiest)
	}
	t.Logf("1000 starts over %d distinct seconds from %s to %s, at most %d in one second", len(perSecond), earliest, latest, busiest)
}
