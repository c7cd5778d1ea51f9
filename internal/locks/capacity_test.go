package locks

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// window is a window of spec.capacitySchedule from start to end (HH:MM, UTC unless zone), on the
// days given (every day when none), of the capacity.
func window(start, end string, capacity int32, days ...v1alpha1.Weekday) v1alpha1.CapacityWindow {
	return v1alpha1.CapacityWindow{Start: start, End: end, Days: days, Capacity: ptr.To(capacity)}
}

// inZone is the window read in the time zone.
func inZone(w v1alpha1.CapacityWindow, zone string) v1alpha1.CapacityWindow {
	w.TimeZone = v1alpha1.TimeZone(zone)
	return w
}

// scheduled is the OaatLock nas of capacity 2 with the capacity schedule, holding the holders.
func scheduled(windows []v1alpha1.CapacityWindow, hs ...v1alpha1.LockHolder) *v1alpha1.OaatLock {
	l := lock("nas", 2, hs...)
	l.Spec.CapacitySchedule = windows
	return l
}

// windows is a capacity schedule.
func windows(ws ...v1alpha1.CapacityWindow) []v1alpha1.CapacityWindow { return ws }

// TestCapacityAt proves the capacity in force at t0 (Saturday 2026-11-21 12:00 UTC) and its next
// change: spec.capacity outside the windows, a window's capacity inside it, the smallest of the
// open ones where they overlap; the next change is the first boundary at which the capacity in
// force differs, past boundaries that leave it as it is, within eight days.
func TestCapacityAt(t *testing.T) {
	sat := func(hhmm string) time.Time { return clockAt("2026-11-21", hhmm, time.UTC) }
	tests := []struct {
		name string
		lock v1alpha1.Lock
		now  time.Time
		want Capacity
	}{
		{name: "no schedule: spec.capacity, no change",
			lock: scheduled(nil), now: t0, want: Capacity{InForce: 2}},
		{name: "before a night window: spec.capacity, the window's from its start",
			lock: scheduled(windows(window("22:00", "06:00", 4))), now: t0,
			want: Capacity{InForce: 2, NextAt: sat("22:00"), Next: 4}},
		{name: "inside a night window: its capacity, spec.capacity from its end the next morning",
			lock: scheduled(windows(window("22:00", "06:00", 4))), now: sat("23:00"),
			want: Capacity{InForce: 4, NextAt: clockAt("2026-11-22", "06:00", time.UTC), Next: 2}},
		{name: "at a window's start: its capacity (windows contain their start)",
			lock: scheduled(windows(window("12:00", "13:00", 1))), now: t0,
			want: Capacity{InForce: 1, NextAt: sat("13:00"), Next: 2}},
		{name: "at a window's end: spec.capacity (windows do not contain their end)",
			lock: scheduled(windows(window("11:00", "12:00", 1))), now: t0,
			want: Capacity{InForce: 2, NextAt: clockAt("2026-11-22", "11:00", time.UTC), Next: 1}},
		{name: "overlapping windows: the smallest open capacity, then the other's",
			lock: scheduled(windows(window("08:00", "18:00", 1), window("11:00", "13:00", 0))), now: t0,
			want: Capacity{InForce: 0, NextAt: sat("13:00"), Next: 1}},
		{name: "windows end to end with one capacity: the change comes where the capacity changes",
			lock: scheduled(windows(window("10:00", "13:00", 3), window("13:00", "15:00", 3))), now: t0,
			want: Capacity{InForce: 3, NextAt: sat("15:00"), Next: 2}},
		{name: "a window of spec.capacity's own value: no change",
			lock: scheduled(windows(window("14:00", "15:00", 2))), now: t0, want: Capacity{InForce: 2}},
		{name: "a window on Mondays: the change two days ahead",
			lock: scheduled(windows(window("09:00", "17:00", 0, "Mon"))), now: t0,
			want: Capacity{InForce: 2, NextAt: clockAt("2026-11-23", "09:00", time.UTC), Next: 0}},
		{name: "a window in Europe/Berlin (UTC+1 in November): read in its zone",
			lock: scheduled(windows(inZone(window("22:00", "06:00", 5), "Europe/Berlin"))), now: t0,
			want: Capacity{InForce: 2, NextAt: sat("21:00"), Next: 5}},
		{name: "a ClusterOaatLock: the same",
			lock: lockOf(clusterLock("shared", 3), func(l *v1alpha1.ClusterOaatLock) {
				l.Spec.CapacitySchedule = windows(window("11:00", "12:30", 1))
			}), now: t0,
			want: Capacity{InForce: 1, NextAt: sat("12:30"), Next: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := diff(tt.want, CapacityAt(tt.lock, tt.now)); d != "" {
				t.Errorf("CapacityAt (-want +got):\n%s", d)
			}
		})
	}
}

// TestCapacityAtUnreadable proves that a schedule the parser refuses (admission refuses it too:
// only a lock written past admission has one) says which window and why, and puts in force the
// smallest capacity the lock names anywhere, with no change.
func TestCapacityAtUnreadable(t *testing.T) {
	for _, tt := range []struct {
		name    string
		windows []v1alpha1.CapacityWindow
		want    int
		err     string
	}{
		{name: "the zone Local, of a larger capacity: spec.capacity",
			windows: windows(inZone(window("22:00", "06:00", 3), "Local")), want: 2,
			err: `spec.capacitySchedule[0]: time zone "Local" is not an IANA time zone name`},
		{name: "a window of capacity 1 and an empty one: 1",
			windows: windows(window("01:00", "02:00", 1), window("03:00", "03:00", 4)), want: 1,
			err: `spec.capacitySchedule[1]: start and end are both "03:00": a window cannot be empty`},
		{name: "a window without a capacity",
			windows: windows(v1alpha1.CapacityWindow{Start: "01:00", End: "02:00"}), want: 0,
			err: `spec.capacitySchedule[0]: capacity is missing`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := CapacityAt(scheduled(tt.windows), t0)
			if got.Err == nil || got.Err.Error() != tt.err {
				t.Errorf("error %v, want %q", got.Err, tt.err)
			}
			if got.InForce != tt.want || !got.NextAt.IsZero() {
				t.Errorf("in force %d, next change at %v; want %d and none", got.InForce, got.NextAt, tt.want)
			}
		})
	}
}

// TestCapacityStatus proves the status written for a capacity: in force always, the next change
// when there is one.
func TestCapacityStatus(t *testing.T) {
	next := t0.Add(time.Hour)
	if d := diff(v1alpha1.CapacityStatus{CapacityInForce: ptr.To[int32](0),
		NextCapacityChange: &v1alpha1.CapacityChange{At: at(time.Hour), Capacity: ptr.To[int32](3)}},
		Capacity{InForce: 0, NextAt: next, Next: 3}.Status()); d != "" {
		t.Errorf("with a change (-want +got):\n%s", d)
	}
	if d := diff(v1alpha1.CapacityStatus{CapacityInForce: ptr.To[int32](2)}, Capacity{InForce: 2}.Status()); d != "" {
		t.Errorf("without a change (-want +got):\n%s", d)
	}
}

// TestDecideCapacitySchedule proves the review of a lock under its capacity schedule: it grants up
// to the capacity in force, keeps the runs above a cut (they drain; no event), grants nothing in a
// window of capacity 0 even while its breaker is open, and asks to be reviewed again at the next
// change.
func TestDecideCapacitySchedule(t *testing.T) {
	a1, b1 := holder("a", "a-1"), holder("b", "b-1")
	cut := windows(window("11:00", "13:00", 1))
	at13 := t0.Add(time.Hour)
	runReviews(t, []reviewCase{
		{name: "a cut below the holders: both kept, none granted, no event",
			in: reviewOf(scheduled(cut, a1, b1), members(grp("a").running("a-1"), grp("b").running("b-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(a1, b1), WaitingGroups: 1, RetryAt: at13,
				Capacity: Capacity{InForce: 1, NextAt: at13, Next: 2}}},
		{name: "a cut, one run left: still none granted",
			in: reviewOf(scheduled(cut, a1), members(grp("a").running("a-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(a1), WaitingGroups: 1, RetryAt: at13,
				Capacity: Capacity{InForce: 1, NextAt: at13, Next: 2}}},
		{name: "a cut, the runs drained: one granted",
			in: reviewOf(scheduled(cut), members(grp("c").requesting(0, "c-1"), grp("d").requesting(time.Second, "d-1"))),
			want: Review{Holders: holders(holder("c", "c-1")), Granted: holders(holder("c", "c-1")), WaitingGroups: 2, RetryAt: at13,
				Capacity: Capacity{InForce: 1, NextAt: at13, Next: 2}}},
		{name: "a window raising the capacity: granted above spec.capacity",
			in: reviewOf(scheduled(windows(window("11:00", "13:00", 3)), a1, b1),
				members(grp("a").running("a-1"), grp("b").running("b-1"), grp("c").requesting(0, "c-1"))),
			want: Review{Holders: holders(a1, b1, holder("c", "c-1")), Granted: holders(holder("c", "c-1")), WaitingGroups: 1, RetryAt: at13,
				Capacity: Capacity{InForce: 3, NextAt: at13, Next: 2}}},
		{name: "a window of capacity 0 and an open breaker: none granted",
			in: reviewOf(lockOf(carrying(v1alpha1.BreakerOpen), func(l *v1alpha1.OaatLock) { l.Spec.CapacitySchedule = windows(window("11:00", "13:00", 0)) }),
				members(grp("c").requesting(0, "c-1"))),
			want: Review{Breaker: &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen}, WaitingGroups: 1, RetryAt: at13,
				Capacity: Capacity{InForce: 0, NextAt: at13, Next: 3}}},
		{name: "a run asserted over the capacity in force: the event names that capacity",
			in: reviewOf(scheduled(cut, a1), members(grp("a").running("a-1"), grp("b").running("b-1"))),
			want: Review{Holders: holders(a1, b1), Asserted: holders(b1), RetryAt: at13,
				Capacity: Capacity{InForce: 1, NextAt: at13, Next: 2},
				Events:   []Event{overCapacity("b", "b-1", 2)}}},
	})
}

// TestDecideUnreadableSchedule proves that the review of a lock whose schedule cannot be read
// grants up to the smallest capacity the lock names and reports it on the lock.
func TestDecideUnreadableSchedule(t *testing.T) {
	l := scheduled(windows(window("01:00", "02:00", 1), inZone(window("03:00", "04:00", 5), "Local")))
	got := Decide(reviewOf(l, members(grp("c").requesting(0, "c-1"), grp("d").requesting(time.Second, "d-1"))))
	if d := diff(holders(holder("c", "c-1")), got.Granted); d != "" {
		t.Errorf("granted (-want +got):\n%s", d)
	}
	want := Event{Type: "Warning", Reason: v1alpha1.ReasonCapacityScheduleInvalid,
		Message: `OaatLock nas: spec.capacitySchedule[1]: time zone "Local" is not an IANA time zone name; the smallest capacity the lock names anywhere, 1, is in force until the schedule is fixed`}
	if d := diff([]Event{want}, got.Events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// clockAt is the instant of the date (YYYY-MM-DD) and time of day (HH:MM) in loc.
func clockAt(date, hhmm string, loc *time.Location) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", date+" "+hhmm, loc)
	if err != nil {
		panic(err)
	}
	return t
}

// TestHighestCapacity proves the most slots a lock's spec gives at any time: spec.capacity, or a
// window's larger capacity.
func TestHighestCapacity(t *testing.T) {
	for _, tt := range []struct {
		name string
		lock v1alpha1.Lock
		want int
	}{
		{name: "no schedule", lock: scheduled(nil), want: 2},
		{name: "windows below spec.capacity", lock: scheduled(windows(window("01:00", "02:00", 0), window("03:00", "04:00", 1))), want: 2},
		{name: "a window above it", lock: scheduled(windows(window("01:00", "02:00", 0), window("22:00", "06:00", 4))), want: 4},
	} {
		if got := HighestCapacity(tt.lock); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
