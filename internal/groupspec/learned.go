package groupspec

import (
	"errors"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/runstats"
)

// Learned is spec.learnedRunTimeout read, its defaults applied.
type Learned struct {
	// Factor multiplies the longest of an item's kept runs.
	Factor int64
	// Min and Max bound the learned timeout; Max is also an item's timeout with no kept run.
	Min, Max time.Duration
}

// Timeout is the learned timeout of an item whose kept run durations are recent.
func (l *Learned) Timeout(recent []int64) time.Duration {
	return runstats.LearnedTimeout(recent, l.Factor, l.Min, l.Max)
}

// RunTimeoutOf is the bound of a run of an item whose kept run durations are recent: its learned
// timeout with spec.learnedRunTimeout, else spec.runTimeout; zero for no bound.
func (p Policy) RunTimeoutOf(recent []int64) time.Duration {
	if p.Learned != nil {
		return p.Learned.Timeout(recent)
	}
	return p.RunTimeout
}

// learned reads spec.learnedRunTimeout; nil without one.
func learned(l *v1alpha1.LearnedRunTimeout) (*Learned, error) {
	if l == nil {
		return nil, nil
	}
	out := &Learned{Factor: v1alpha1.DefaultLearnedFactor}
	if l.Factor != 0 {
		out.Factor = int64(l.Factor)
	}
	minimum := l.Min
	if minimum == "" {
		minimum = v1alpha1.DefaultLearnedMin
	}
	var err error
	if out.Min, err = Duration("spec.learnedRunTimeout.min", minimum); err != nil {
		return nil, err
	}
	if l.Max == "" {
		return nil, errors.New("spec.learnedRunTimeout.max: required")
	}
	if out.Max, err = Duration("spec.learnedRunTimeout.max", l.Max); err != nil {
		return nil, err
	}
	return out, nil
}
