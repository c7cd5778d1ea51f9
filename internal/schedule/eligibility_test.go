package schedule

import (
	"testing"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestEligibleAt(t *testing.T) {
	timing := Timing{Frequency: time.Hour, FailureCoolOff: 10 * time.Minute}
	tests := []struct {
		name       string
		item       Item
		want       time.Time
		wantReason v1alpha1.WaitReason
	}{
		{name: "never ran", item: Item{}, want: time.Time{}},
		{name: "success waits frequency", item: Item{LastSuccess: now}, want: now.Add(time.Hour), wantReason: v1alpha1.WaitSucceededRecently},
		{name: "failure waits cool-off", item: Item{LastFailure: now, FailureCount: 1}, want: now.Add(10 * time.Minute), wantReason: v1alpha1.WaitCoolingOff},
		{
			name:       "the later of both",
			item:       Item{LastSuccess: ago(55 * time.Minute), LastFailure: ago(time.Minute), FailureCount: 1},
			want:       now.Add(9 * time.Minute),
			wantReason: v1alpha1.WaitCoolingOff,
		},
		{name: "a waived cool-off does not hold", item: Item{LastFailure: now, FailureCount: 3, CoolOffWaived: true}, want: time.Time{}},
		{
			name:       "a waived cool-off leaves the frequency",
			item:       Item{LastSuccess: ago(5 * time.Minute), LastFailure: now, FailureCount: 1, CoolOffWaived: true},
			want:       now.Add(55 * time.Minute),
			wantReason: v1alpha1.WaitSucceededRecently,
		},
		{
			name:       "a failed verification (RerunItem) waits the cool-off instead of the frequency",
			item:       Item{LastSuccess: ago(5 * time.Minute), Unverified: true, VerifyFailure: ago(4 * time.Minute)},
			want:       now.Add(6 * time.Minute),
			wantReason: v1alpha1.WaitCoolingOff,
		},
		{
			name: "a failed verification whose cool-off has passed does not hold",
			item: Item{LastSuccess: ago(15 * time.Minute), Unverified: true, VerifyFailure: ago(11 * time.Minute)},
			want: ago(time.Minute),
			// the instant is past: WaitOf lets the item start
			wantReason: v1alpha1.WaitCoolingOff,
		},
		{
			name:       "frequency still running after a failure",
			item:       Item{LastSuccess: ago(5 * time.Minute), LastFailure: ago(time.Minute), FailureCount: 1},
			want:       now.Add(55 * time.Minute),
			wantReason: v1alpha1.WaitSucceededRecently,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := timing.EligibleAt(tt.item)
			if !got.Equal(tt.want) || reason != tt.wantReason {
				t.Fatalf("EligibleAt() = %v, %q; want %v, %q", got, reason, tt.want, tt.wantReason)
			}
		})
	}
	noCoolOff := Timing{Frequency: time.Hour}
	if got, _ := noCoolOff.EligibleAt(Item{LastFailure: now, FailureCount: 3}); !got.IsZero() {
		t.Fatalf("without cool-off a failed item waits until %v", got)
	}
}

func TestCoolOff(t *testing.T) {
	fixed := Timing{FailureCoolOff: time.Minute}
	exponential := Timing{FailureCoolOff: time.Minute, Exponential: true, MaxCoolOff: 10 * time.Minute}
	tests := []struct {
		timing   Timing
		failures int32
		want     time.Duration
	}{
		{fixed, 1, time.Minute},
		{fixed, 7, time.Minute},
		{exponential, 0, time.Minute},
		{exponential, 1, time.Minute},
		{exponential, 2, 2 * time.Minute},
		{exponential, 3, 4 * time.Minute},
		{exponential, 4, 8 * time.Minute},
		{exponential, 5, 10 * time.Minute},
		{exponential, 1 << 30, 10 * time.Minute},
		{Timing{FailureCoolOff: 3 * time.Minute, Exponential: true, MaxCoolOff: 10 * time.Minute}, 3, 10 * time.Minute},
	}
	for _, tt := range tests {
		if got := tt.timing.CoolOff(tt.failures); got != tt.want {
			t.Errorf("%+v.CoolOff(%d) = %v, want %v", tt.timing, tt.failures, got, tt.want)
		}
	}
	backedOff := Item{LastFailure: now, FailureCount: 3}
	if got, reason := exponential.EligibleAt(backedOff); !got.Equal(now.Add(4*time.Minute)) || reason != v1alpha1.WaitCoolingOff {
		t.Fatalf("the third failure waits %v (%s), want 4m", got.Sub(now), reason)
	}
}

func TestEligibleBoundary(t *testing.T) {
	timing := Timing{Frequency: time.Minute}
	it := Item{LastSuccess: ago(time.Minute)}
	if !timing.Eligible(it, now) {
		t.Fatal("an item is eligible at the instant its frequency ends")
	}
	if timing.Eligible(it, now.Add(-time.Nanosecond)) {
		t.Fatal("an item is not eligible before its frequency ends")
	}
}

func mustWindow(t *testing.T, start, end string, stop, avoid bool) Window {
	t.Helper()
	w, err := ParseWindow(start, end, nil, "")
	if err != nil {
		t.Fatalf("ParseWindow(%s, %s): %v", start, end, err)
	}
	w.StopRunning, w.AvoidOverrun = stop, avoid
	return w
}

// now is 12:00 UTC.
func TestWaitOf(t *testing.T) {
	lunch := mustWindow(t, "12:00", "13:00", false, false)
	tea := mustWindow(t, "16:00", "16:30", false, true)
	timing := Timing{Frequency: time.Hour, FailureCoolOff: 10 * time.Minute, Windows: Windows{lunch, tea}}
	at := func(hhmm string) time.Time {
		parsed, _ := time.Parse("15:04", hhmm)
		return time.Date(now.Year(), now.Month(), now.Day(), parsed.Hour(), parsed.Minute(), 0, 0, time.UTC)
	}
	tests := []struct {
		name string
		item Item
		now  time.Time
		want Wait
	}{
		{name: "free before the window", item: Item{}, now: at("11:59"), want: Wait{}},
		{name: "blackout holds an eligible item until the window ends", item: Item{}, now: at("12:00"),
			want: Wait{Until: at("13:00"), Reason: v1alpha1.WaitBlackout}},
		{name: "eligible inside a window: blackout", item: Item{LastSuccess: at("11:30")}, now: at("11:45"),
			want: Wait{Until: at("13:00"), Reason: v1alpha1.WaitBlackout}},
		{name: "eligible after the window: its own reason", item: Item{LastSuccess: at("12:30")}, now: at("12:45"),
			want: Wait{Until: at("13:30"), Reason: v1alpha1.WaitSucceededRecently}},
		{name: "free at the window's end", item: Item{}, now: at("13:00"), want: Wait{}},
		{name: "an expected run that fits", item: Item{ExpectedRun: 30 * time.Minute}, now: at("15:30"), want: Wait{}},
		{name: "an expected run that would overrun waits for the window's end", item: Item{ExpectedRun: 31 * time.Minute}, now: at("15:30"),
			want: Wait{Until: at("16:30"), Reason: v1alpha1.WaitOverrun}},
		{name: "overrun into a window without avoidOverrun is allowed", item: Item{ExpectedRun: 2 * time.Hour}, now: at("11:00"), want: Wait{}},
		{name: "overrun after the history's wait", item: Item{LastFailure: at("15:20"), FailureCount: 1, ExpectedRun: 45 * time.Minute}, now: at("15:25"),
			want: Wait{Until: at("16:30"), Reason: v1alpha1.WaitOverrun}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := timing.WaitOf(tt.item, tt.now)
			if !got.Until.Equal(tt.want.Until) || got.Reason != tt.want.Reason {
				t.Fatalf("WaitOf() = %v %q, want %v %q", got.Until, got.Reason, tt.want.Until, tt.want.Reason)
			}
		})
	}
}

// An item longer than every gap between avoidOverrun windows keeps waiting, each time until a
// later window's end, rather than looping or starting.
func TestWaitOfNeverFits(t *testing.T) {
	everyHour := make(Windows, 0, 24)
	for h := range 24 {
		everyHour = append(everyHour, mustWindow(t, time.Date(0, 1, 1, h, 0, 0, 0, time.UTC).Format("15:04"),
			time.Date(0, 1, 1, h, 10, 0, 0, time.UTC).Format("15:04"), false, true))
	}
	timing := Timing{Frequency: time.Hour, Windows: everyHour}
	got := timing.WaitOf(Item{ExpectedRun: time.Hour}, now.Add(20*time.Minute))
	if got.Reason != v1alpha1.WaitOverrun || !got.Until.After(now) {
		t.Fatalf("WaitOf() = %v %q, want an Overrun wait", got.Until, got.Reason)
	}
}
