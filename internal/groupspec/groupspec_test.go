package groupspec

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/schedule"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// group is the builders' group "g" with the spec.
func group(spec v1alpha1.OaatGroupSpec) *v1alpha1.OaatGroup {
	g := builders.Group().Named("g").Obj()
	g.Spec = spec
	return g
}

// window is the schedule.Window that spec.blackoutWindows' w reads as.
func window(t *testing.T, w v1alpha1.BlackoutWindow) schedule.Window {
	t.Helper()
	days := make([]string, len(w.Days))
	for i, d := range w.Days {
		days[i] = string(d)
	}
	parsed, err := schedule.ParseWindow(w.Start, w.End, days, string(w.TimeZone))
	if err != nil {
		t.Fatalf("parsing window %+v: %v", w, err)
	}
	parsed.StopRunning, parsed.AvoidOverrun = w.StopRunning, w.AvoidOverrun
	return parsed
}

func TestRead(t *testing.T) {
	night := v1alpha1.BlackoutWindow{Start: "01:00", End: "03:00", StopRunning: true}
	bad := v1alpha1.BlackoutWindow{Start: "25:00", End: "03:00"}
	tests := []struct {
		name    string
		group   *v1alpha1.OaatGroup
		want    Policy
		wantErr string
	}{{
		name:  "defaults",
		group: group(v1alpha1.OaatGroupSpec{}),
		want:  Policy{Timing: schedule.Timing{Frequency: time.Hour}},
	}, {
		name: "every field",
		group: group(v1alpha1.OaatGroupSpec{
			Mode: v1alpha1.ModeEachOnce, Suspend: true, Frequency: "2h", FailureCoolOff: "10m",
			RunTimeout: "30m", PendingTimeout: "5m",
			Backoff:         &v1alpha1.Backoff{Policy: v1alpha1.BackoffExponential},
			ExitCodes:       &v1alpha1.ExitCodes{Success: []int32{3}},
			BlackoutWindows: []v1alpha1.BlackoutWindow{night},
		}),
		want: Policy{
			Timing: schedule.Timing{
				Frequency: 2 * time.Hour, FailureCoolOff: 10 * time.Minute, Exponential: true,
				MaxCoolOff: mustDuration(t, v1alpha1.DefaultMaxCoolOff), Windows: schedule.Windows{window(t, night)},
			},
			RunTimeout: 30 * time.Minute, PendingTimeout: 5 * time.Minute,
			ExitCodes: v1alpha1.ExitCodes{Success: []int32{3}}, EachOnce: true, Suspended: v1alpha1.ReasonSpecSuspend,
		},
	}, {
		name: "paused by annotation",
		group: func() *v1alpha1.OaatGroup {
			g := group(v1alpha1.OaatGroupSpec{Frequency: "1m"})
			g.Annotations = map[string]string{v1alpha1.AnnotationPauseNewJobs: "true"}
			return g
		}(),
		want: Policy{Timing: schedule.Timing{Frequency: time.Minute}, Suspended: v1alpha1.ReasonPauseAnnotation},
	}, {
		name:  "the first error names its field; the rest is read",
		group: group(v1alpha1.OaatGroupSpec{Frequency: "soon", RunTimeout: "later", PendingTimeout: "1m", BlackoutWindows: []v1alpha1.BlackoutWindow{bad, night}}),
		want: Policy{
			Timing:         schedule.Timing{Windows: schedule.Windows{window(t, night)}},
			PendingTimeout: time.Minute,
		},
		wantErr: "spec.frequency: ",
	}, {
		name:    "a window that cannot be parsed is left out",
		group:   group(v1alpha1.OaatGroupSpec{BlackoutWindows: []v1alpha1.BlackoutWindow{night, bad}}),
		want:    Policy{Timing: schedule.Timing{Frequency: time.Hour, Windows: schedule.Windows{window(t, night)}}},
		wantErr: "spec.blackoutWindows[1]: ",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(tt.group)
			if diff := cmp.Diff(tt.want, got, policyCmp...); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
			if gotErr := errText(err); !startsWith(gotErr, tt.wantErr) || (tt.wantErr == "") != (err == nil) {
				t.Errorf("Read error = %q, want one starting with %q", gotErr, tt.wantErr)
			}
		})
	}
}

func TestReadSchedule(t *testing.T) {
	g := group(v1alpha1.OaatGroupSpec{Schedule: "0 1 * * *", ScheduleTimeZone: "Europe/Paris", Frequency: "soon"})
	got, err := Read(g)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	want, err := schedule.GroupCalendar(g)
	if err != nil {
		t.Fatalf("GroupCalendar: %v", err)
	}
	// A group with a schedule has no frequency: its unparsable spec.frequency is not read.
	if diff := cmp.Diff(Policy{Calendar: want}, got, policyCmp...); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}
	if _, err := Read(group(v1alpha1.OaatGroupSpec{Schedule: "0 1 * * *", ScheduleTimeZone: "Mars/Olympus"})); !startsWith(errText(err), "spec.") {
		t.Errorf("Read of an unknown time zone: error %v, want one naming its spec field", err)
	}
}

func TestFieldReaders(t *testing.T) {
	g := group(v1alpha1.OaatGroupSpec{})
	frequency, err := Frequency(g)
	got := []any{FrequencyOf(g), frequency, err, TimeZoneOf(g)}
	g.Spec.Frequency, g.Spec.ScheduleTimeZone, g.Spec.RunTimeout = "5m", "Asia/Tokyo", "1h"
	frequency, err = Frequency(g)
	timeout, timeoutErr := RunTimeout(g)
	got = append(got, FrequencyOf(g), frequency, err, TimeZoneOf(g), timeout, timeoutErr)
	want := []any{v1alpha1.DefaultFrequency, time.Hour, nil, "UTC", v1alpha1.Duration("5m"), 5 * time.Minute, nil, "Asia/Tokyo", time.Hour, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("field readers (-want +got):\n%s", diff)
	}
	if _, err := Duration("spec.x", "ten minutes"); !startsWith(errText(err), "spec.x: ") {
		t.Errorf("Duration error = %v, want one naming spec.x", err)
	}
}

func mustDuration(t *testing.T, d v1alpha1.Duration) time.Duration {
	t.Helper()
	parsed, err := Duration("test", d)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

// policyCmp compares Policies: windows by their fields, zones by name, calendars by their ticks.
var policyCmp = []cmp.Option{
	cmp.AllowUnexported(schedule.Window{}), cmpopts.EquateEmpty(),
	cmp.Comparer(func(a, b *time.Location) bool { return a.String() == b.String() }),
	cmp.Comparer(func(a, b schedule.Calendar) bool {
		ref := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
		aTick, aOK := a.NextTick(ref)
		bTick, bOK := b.NextTick(ref)
		return a.IsZero() == b.IsZero() && aOK == bOK && aTick.Equal(bTick) && a.Delay(aTick) == b.Delay(bTick)
	}),
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// An item last successful at midnight, due hourly: oaat_item_overdue_seconds grows from 01:00 and
// OaatItemOverdue's expression turns true at 03:00.
func TestOverdueAlertAt(t *testing.T) {
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if got, want := OverdueAlertAt(base, time.Hour), base.Add(3*time.Hour); !got.Equal(want) {
		t.Errorf("OverdueAlertAt = %s, want %s", got, want)
	}
}
