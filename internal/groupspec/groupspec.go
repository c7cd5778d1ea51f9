// Package groupspec is the one reader of an OaatGroup's spec: every default is applied and every
// duration, window and calendar parsed here, and an error names the field it is about (say
// "spec.runTimeout: ..."). The planner decides from what Read returns; the queue priority
// (internal/duepriority), the metrics, the forecast and the status view read the parts they need
// with the same functions, so no two of them can disagree on a default or a parse.
package groupspec

import (
	"fmt"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duration"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// Policy is the group's spec read for decisions (spec.circuitBreaker apart: the planner reads it
// with its breaker).
type Policy struct {
	// Timing is when an item may start: its frequency, cool-offs, backoff and blackout windows.
	Timing schedule.Timing
	// Calendar is spec.schedule; the zero Calendar without one (items are then due by frequency).
	Calendar schedule.Calendar
	// RunTimeout bounds every run (spec.runTimeout); zero for no bound. With Learned, each
	// item's own bound is RunTimeoutOf's.
	RunTimeout time.Duration
	// Learned is spec.learnedRunTimeout read; nil without one.
	Learned *Learned
	// PendingTimeout bounds the wait for a run's first container to start; zero for no bound.
	PendingTimeout time.Duration
	// ExitCodes is spec.exitCodes; empty without one.
	ExitCodes v1alpha1.ExitCodes
	// EachOnce says the group runs each item once (mode EachOnce).
	EachOnce bool
	// Suspended is the reason of the Suspended condition, empty when the group is not suspended.
	Suspended v1alpha1.Reason
}

// Read reads the group's spec; an error names the first field that cannot be used.
//
// Admission refuses every error that Read can return, with the same bounds (tests/admission
// sends the same values to both): the durations' syntax, zero and overflow (v1alpha1.Duration);
// the schedule's shape, length, field values, ranges, steps and a schedule that matches no date
// (v1alpha1.CronSchedule); unknown zones and Local (v1alpha1.TimeZone: the zones of the Go
// release the manager embeds, which LoadLocation always finds); the windows' times, days and
// empty windows (v1alpha1.BlackoutWindow). Read still reports them, for an object stored before
// these rules were installed: the API server does not check stored objects again, and an update
// that leaves a field as it was keeps its old value (validation ratcheting). A group without
// items (oaatItemsFrom gives none) is the planner's InvalidSpec that admission cannot refuse: it
// depends on other objects (ConfigMaps, claims) that change after the group is admitted. Every field is
// read even after an error, and the Policy returned holds all that could be read: an invalid edit
// during a run (say a mistyped time zone) makes the group not Ready, but the run already started
// keeps its RunTimeout, PendingTimeout and the stopRunning windows that still parse. A window
// that cannot be parsed is left out.
func Read(g *v1alpha1.OaatGroup) (Policy, error) {
	spec := &g.Spec
	p := Policy{EachOnce: spec.Mode == v1alpha1.ModeEachOnce}
	if spec.ExitCodes != nil {
		p.ExitCodes = *spec.ExitCodes
	}
	switch {
	case spec.Suspend:
		p.Suspended = v1alpha1.ReasonSpecSuspend
	case g.Annotations[v1alpha1.AnnotationPauseNewJobs] == "true":
		p.Suspended = v1alpha1.ReasonPauseAnnotation
	}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	var err error
	if spec.Schedule != "" {
		// The schedule's rounds say when an item is due again, not a frequency.
		if p.Calendar, err = schedule.GroupCalendar(g); err != nil {
			keep(err)
		}
	} else if p.Timing.Frequency, err = Frequency(g); err != nil {
		keep(err)
	}
	if p.Timing.FailureCoolOff, err = Duration("spec.failureCoolOff", spec.FailureCoolOff); err != nil {
		keep(err)
	}
	if p.RunTimeout, err = RunTimeout(g); err != nil {
		keep(err)
	}
	if p.Learned, err = learned(spec.LearnedRunTimeout); err != nil {
		keep(err)
	}
	if p.PendingTimeout, err = Duration("spec.pendingTimeout", spec.PendingTimeout); err != nil {
		keep(err)
	}
	if b := spec.Backoff; b != nil && b.Policy == v1alpha1.BackoffExponential {
		maxCoolOff := b.MaxCoolOff
		if maxCoolOff == "" {
			maxCoolOff = v1alpha1.DefaultMaxCoolOff
		}
		p.Timing.Exponential = true
		if p.Timing.MaxCoolOff, err = Duration("spec.backoff.maxCoolOff", maxCoolOff); err != nil {
			keep(err)
		}
	}
	for i, w := range spec.BlackoutWindows {
		days := make([]string, len(w.Days))
		for j, day := range w.Days {
			days[j] = string(day)
		}
		window, err := schedule.ParseWindow(w.Start, w.End, days, string(w.TimeZone))
		if err != nil {
			keep(fmt.Errorf("spec.blackoutWindows[%d]: %w", i, err))
			continue
		}
		window.StopRunning, window.AvoidOverrun = w.StopRunning, w.AvoidOverrun
		p.Timing.Windows = append(p.Timing.Windows, window)
	}
	return p, first
}

// FrequencyOf is spec.frequency as written, or its default when absent.
func FrequencyOf(g *v1alpha1.OaatGroup) v1alpha1.Duration {
	if g.Spec.Frequency == "" {
		return v1alpha1.DefaultFrequency
	}
	return g.Spec.Frequency
}

// Frequency is FrequencyOf parsed: how often an item of a group without spec.schedule is due.
func Frequency(g *v1alpha1.OaatGroup) (time.Duration, error) {
	return Duration("spec.frequency", FrequencyOf(g))
}

// OverdueAlertFactor is how many frequencies past its deadline (its frequency after its last
// success, where oaat_item_overdue_seconds starts to grow) an item of a group without
// spec.schedule must be for the OaatItemOverdue alert: its expression is oaat_item_overdue_seconds
// above OverdueAlertFactor × oaat_group_frequency_seconds (config/prometheus/alerts.yaml, which
// tests/prometheus holds to this constant).
const OverdueAlertFactor = 2

// OverdueAlertAt is the instant OaatItemOverdue's expression turns true for an item whose last
// success (or, when it never succeeded, its group's creation) was at base: the forecast's ItemLate
// deadline.
func OverdueAlertAt(base time.Time, frequency time.Duration) time.Time {
	return base.Add((1 + OverdueAlertFactor) * frequency)
}

// RunTimeout is spec.runTimeout parsed; zero when absent (no bound).
func RunTimeout(g *v1alpha1.OaatGroup) (time.Duration, error) {
	return Duration("spec.runTimeout", g.Spec.RunTimeout)
}

// ItemRunTimeout is the bound of the item's runs (Policy.RunTimeoutOf): its learned timeout with
// spec.learnedRunTimeout, else spec.runTimeout; zero for no bound.
func ItemRunTimeout(g *v1alpha1.OaatGroup, item string) (time.Duration, error) {
	timeout, err := RunTimeout(g)
	if err != nil {
		return 0, err
	}
	l, err := learned(g.Spec.LearnedRunTimeout)
	if err != nil {
		return 0, err
	}
	return Policy{RunTimeout: timeout, Learned: l}.RunTimeoutOf(RecentRunSeconds(g.Status.Items, item)), nil
}

// RecentRunSeconds are the kept run durations of item in items, nil when it has no entry.
func RecentRunSeconds(items []v1alpha1.ItemStatus, item string) []int64 {
	if it := ItemStatusOf(items, item); it != nil {
		return it.RecentRunSeconds
	}
	return nil
}

// ItemStatusOf is the status entry of item in items, nil when there is none.
func ItemStatusOf(items []v1alpha1.ItemStatus, item string) *v1alpha1.ItemStatus {
	for i := range items {
		if items[i].Name == item {
			return &items[i]
		}
	}
	return nil
}

// TimeZoneOf is spec.scheduleTimeZone, or UTC (the calendar's default) when absent.
func TimeZoneOf(g *v1alpha1.OaatGroup) string {
	if g.Spec.ScheduleTimeZone == "" {
		return "UTC"
	}
	return string(g.Spec.ScheduleTimeZone)
}

// Duration parses an optional duration of the spec at the path field; empty is zero.
func Duration(field string, d v1alpha1.Duration) (time.Duration, error) {
	if d == "" {
		return 0, nil
	}
	parsed, err := duration.Parse(string(d))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return parsed, nil
}
