package planner

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duration"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// policy is the group's spec read for decisions.
type policy struct {
	timing     schedule.Timing
	runTimeout time.Duration
	// pendingTimeout bounds the wait for a run's first container to start.
	pendingTimeout time.Duration
	exitCodes      v1alpha1.ExitCodes
	eachOnce       bool
	suspended      string // the reason of the Suspended condition, empty when not suspended
	history        *v1alpha1.PodHistory
	calendar       schedule.Calendar // spec.schedule; the zero Calendar without one
	breaker        *breakerPolicy    // spec.circuitBreaker; nil without one
}

// readPolicy reads the group's spec; an error names the first field that cannot be used. Every
// field is read even after an error, and the policy returned holds all that could be read: an
// invalid edit during a run (say a mistyped time zone) makes the group not Ready, but the run
// already started keeps its runTimeout, pendingTimeout and the stopRunning windows that still parse (stopCurrentRun
// uses them). A window that cannot be parsed is left out.
func readPolicy(g *v1alpha1.OaatGroup) (policy, error) {
	spec := &g.Spec
	p := policy{eachOnce: spec.Mode == v1alpha1.ModeEachOnce, history: spec.PodHistory}
	if spec.ExitCodes != nil {
		p.exitCodes = *spec.ExitCodes
	}
	switch {
	case spec.Suspend:
		p.suspended = v1alpha1.ReasonSpecSuspend
	case g.Annotations[v1alpha1.AnnotationPauseNewJobs] == "true":
		p.suspended = v1alpha1.ReasonPauseAnnotation
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
		if p.calendar, err = schedule.GroupCalendar(g); err != nil {
			keep(err)
		}
	} else {
		frequency := spec.Frequency
		if frequency == "" {
			frequency = v1alpha1.DefaultFrequency
		}
		if p.timing.Frequency, err = parseDuration("spec.frequency", frequency); err != nil {
			keep(err)
		}
	}
	if p.timing.FailureCoolOff, err = parseDuration("spec.failureCoolOff", spec.FailureCoolOff); err != nil {
		keep(err)
	}
	if p.runTimeout, err = parseDuration("spec.runTimeout", spec.RunTimeout); err != nil {
		keep(err)
	}
	if p.pendingTimeout, err = parseDuration("spec.pendingTimeout", spec.PendingTimeout); err != nil {
		keep(err)
	}
	if b := spec.Backoff; b != nil && b.Policy == v1alpha1.BackoffExponential {
		maxCoolOff := b.MaxCoolOff
		if maxCoolOff == "" {
			maxCoolOff = v1alpha1.DefaultMaxCoolOff
		}
		p.timing.Exponential = true
		if p.timing.MaxCoolOff, err = parseDuration("spec.backoff.maxCoolOff", maxCoolOff); err != nil {
			keep(err)
		}
	}
	if spec.CircuitBreaker != nil {
		if p.breaker, err = readBreakerPolicy(spec.CircuitBreaker); err != nil {
			keep(err)
		}
	}
	for i, w := range spec.BlackoutWindows {
		days := make([]string, len(w.Days))
		for j, day := range w.Days {
			days[j] = string(day)
		}
		window, err := schedule.ParseWindow(w.Start, w.End, days, w.TimeZone)
		if err != nil {
			keep(fmt.Errorf("spec.blackoutWindows[%d]: %w", i, err))
			continue
		}
		window.StopRunning, window.AvoidOverrun = w.StopRunning, w.AvoidOverrun
		p.timing.Windows = append(p.timing.Windows, window)
	}
	return p, first
}

// parseDuration parses an optional duration of the spec; empty is zero.
func parseDuration(field string, d v1alpha1.Duration) (time.Duration, error) {
	if d == "" {
		return 0, nil
	}
	parsed, err := duration.Parse(string(d))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return parsed, nil
}

// classify applies spec.exitCodes to a failed pod's non-zero exit codes: whether they all count
// as success, and the first that forbids a retry.
func (p policy) classify(codes []int32) (success bool, doNotRetry *int32) {
	for _, code := range codes {
		if slices.Contains(p.exitCodes.DoNotRetry, code) {
			return false, &code
		}
	}
	for _, code := range codes {
		if !slices.Contains(p.exitCodes.Success, code) {
			return false, nil
		}
	}
	return len(codes) > 0, nil
}

// nonZeroExitCodes are the exit codes of the terminated containers that are not 0.
func nonZeroExitCodes(statuses []corev1.ContainerStatus) []int32 {
	var codes []int32
	for _, s := range statuses {
		if term := s.State.Terminated; term != nil && term.ExitCode != 0 {
			codes = append(codes, term.ExitCode)
		}
	}
	return codes
}
