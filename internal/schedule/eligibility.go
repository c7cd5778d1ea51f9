package schedule

import (
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// maxOverrunSteps bounds the search for a start that fits before every avoidOverrun window:
// an item whose expected run never fits keeps waiting, re-examined at the last instant found.
const maxOverrunSteps = 16

// Timing is a group's schedule: how often each item should succeed, how long a failed item
// waits before it may run again, and when no item may start.
type Timing struct {
	// Frequency is the time an item waits after a success.
	Frequency time.Duration
	// FailureCoolOff is the time an item waits after a failure; zero means no wait.
	FailureCoolOff time.Duration
	// Exponential doubles the cool-off with each further consecutive failure.
	Exponential bool
	// MaxCoolOff caps the exponential cool-off.
	MaxCoolOff time.Duration
	// Windows are the blackout windows, during which no item starts.
	Windows Windows
}

// Item is the part of an item's history that scheduling reads. A zero time means never.
type Item struct {
	// Name is the item.
	Name string
	// LastSuccess is when the item's last successful run ended.
	LastSuccess time.Time
	// LastFailure is when the item's last failed run ended.
	LastFailure time.Time
	// FailureCount is the number of failed runs since the last success.
	FailureCount int32
	// ExpectedRun is how long a run of the item is expected to take; zero when unknown.
	ExpectedRun time.Duration
	// CoolOffWaived says that the item's failures do not hold it (a group's circuit breaker is
	// open, or closed after them); they still order it among the candidates.
	CoolOffWaived bool
	// Unverified says that the item's newest verification failed after its last success, with
	// spec.verify.onFailure RerunItem: its last success does not hold it, the failureCoolOff
	// after VerifyFailure does; it still orders it among the candidates.
	Unverified bool
	// VerifyFailure is when the item's newest failed verification ended (with Unverified).
	VerifyFailure time.Time
}

// Wait says why an item may not start at some instant and until when; the zero Wait means it
// may start.
type Wait struct {
	// Until is the instant from which the item may start.
	Until time.Time
	// Reason is one of v1alpha1's wait reasons: SucceededRecently, CoolingOff, Blackout or
	// Overrun.
	Reason v1alpha1.WaitReason
}

// CoolOff is how long an item waits after its failures-th consecutive failure.
func (t Timing) CoolOff(failures int32) time.Duration {
	if !t.Exponential || failures <= 1 {
		return t.FailureCoolOff
	}
	coolOff := t.FailureCoolOff
	for n := int32(1); n < failures; n++ {
		if coolOff >= t.MaxCoolOff/2 {
			return t.MaxCoolOff
		}
		coolOff *= 2
	}
	return min(coolOff, t.MaxCoolOff)
}

// EligibleAt is the instant from which the item's history lets it start (frequency after its
// last success, cool-off after its last failure or, with Unverified, after its failed
// verification), the reason of that wait, and the zero time when its history does not hold it.
func (t Timing) EligibleAt(it Item) (time.Time, v1alpha1.WaitReason) {
	var at time.Time
	var reason v1alpha1.WaitReason
	if !it.LastSuccess.IsZero() && !it.Unverified {
		at, reason = it.LastSuccess.Add(t.Frequency), v1alpha1.WaitSucceededRecently
	}
	if it.Unverified && !it.VerifyFailure.IsZero() {
		if ends := it.VerifyFailure.Add(t.FailureCoolOff); ends.After(at) {
			at, reason = ends, v1alpha1.WaitCoolingOff
		}
	}
	if coolOff := t.CoolOff(it.FailureCount); coolOff > 0 && !it.LastFailure.IsZero() && !it.CoolOffWaived {
		if ends := it.LastFailure.Add(coolOff); ends.After(at) {
			at, reason = ends, v1alpha1.WaitCoolingOff
		}
	}
	return at, reason
}

// WaitOf says whether the item may start at now and, if not, why and until when: its history
// first, then the blackout windows at the instant the history allows, then whether its expected
// run would reach into a window with avoidOverrun.
func (t Timing) WaitOf(it Item, now time.Time) Wait {
	var w Wait
	start := now
	if at, reason := t.EligibleAt(it); at.After(now) {
		w, start = Wait{Until: at, Reason: reason}, at
	}
	for range maxOverrunSteps {
		free, inside := t.Windows.FreeAt(start)
		if inside {
			w, start = Wait{Until: free, Reason: v1alpha1.WaitBlackout}, free
		}
		opens, overruns := t.Windows.Overruns(start, it.ExpectedRun)
		if !overruns {
			return w
		}
		end, _ := t.Windows.FreeAt(opens)
		w, start = Wait{Until: end, Reason: v1alpha1.WaitOverrun}, end
	}
	return w
}

// Eligible reports whether the item may start at now.
func (t Timing) Eligible(it Item, now time.Time) bool {
	return t.WaitOf(it, now) == Wait{}
}

// Candidates returns, in their given order, the items that may start at now (phase one).
func (t Timing) Candidates(items []Item, now time.Time) []Item {
	var candidates []Item
	for _, it := range items {
		if t.Eligible(it, now) {
			candidates = append(candidates, it)
		}
	}
	return candidates
}
