package locks

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/runstats"
)

// A lock with spec.adaptive judges each run it released once the run's group has recorded its
// end (v1alpha1.AdaptiveCapacity has the law). The judging is level-based: a released run the
// group has not recorded yet waits in status.adaptive.ending, and the review that judges a run
// also removes it from there (or releases its slot), in the one status write; a review decided
// again from the same statuses judges the same runs the same way. Installations sharing a
// ClusterOaatLock each judge the runs of the namespaces they serve, and keep the others' ending.

// maxChangeMessage is the longest status.adaptive.lastChange.message the schema accepts.
const maxChangeMessage = 1024

// runVerdict is what one released run says of the target's health.
type runVerdict int

const (
	// unjudged: an interrupted run, a failure the breaker does not count, or a failure or success
	// the run's group did not record as this run's.
	unjudged runVerdict = iota
	// fastRun: a success within AdaptiveFastFactor times its item's median, or of an item with no
	// baseline yet.
	fastRun
	// slowRun: a success between the two factors; the fast successes start again.
	slowRun
	// halving: a counted failure, or a run over AdaptiveSlowFactor times its item's median.
	halving
)

// judgement is a released run's verdict, why and what to say of it.
type judgement struct {
	verdict runVerdict
	reason  v1alpha1.AdaptiveChangeReason
	what    string
}

// judge judges the run of holder h from its item's status entry it, once its group recorded it,
// with the group's counting of failures.
func judge(h v1alpha1.LockHolder, it *v1alpha1.ItemStatus, m *Member) judgement {
	run := fmt.Sprintf("the run of item %q of group %s (pod %s)", h.Item, m.Name, h.Pod)
	switch it.LastResult {
	case v1alpha1.ResultFailed:
		if !m.Counting.Counts(it.LastExitCode, it.LastReason) {
			return judgement{}
		}
		return judgement{verdict: halving, reason: v1alpha1.AdaptiveCountedFailure,
			what: fmt.Sprintf("%s failed (%s), a failure its circuit breaker counts", run, failure(it))}
	case v1alpha1.ResultSucceeded:
	case v1alpha1.ResultInterrupted:
		return judgement{}
	default:
		return judgement{} // no result recorded: a run recorded by a release before lastResult
	}
	v := runstats.Newest(it.RecentRunSeconds)
	if !v.Judged {
		return judgement{verdict: fastRun, what: fmt.Sprintf("%s succeeded (no baseline yet)", run)}
	}
	took := fmt.Sprintf("%s took %d s, %.1f times its item's median of %.0f s", run, v.Seconds, v.Ratio(), v.Median)
	switch ratio := v.Ratio(); {
	case ratio > v1alpha1.AdaptiveSlowFactor:
		return judgement{verdict: halving, reason: v1alpha1.AdaptiveSlowRun, what: took}
	case ratio <= v1alpha1.AdaptiveFastFactor:
		return judgement{verdict: fastRun, what: took}
	}
	return judgement{verdict: slowRun, what: took}
}

// failure describes a recorded failure: its exit code and reason.
func failure(it *v1alpha1.ItemStatus) string {
	if it.LastExitCode == nil {
		return it.LastReason
	}
	return fmt.Sprintf("exit code %d, %s", *it.LastExitCode, it.LastReason)
}

// adapt applies the law to the runs released now (r.Dropped) and to those still ending, and
// decides the capacity in use. Runs are judged in the order they took the lock.
func (r *Review) adapt(in ReviewInput) {
	spec := in.Lock.AdaptiveSpec()
	if spec == nil {
		return
	}
	st := adaptiveState(in.Lock, spec)
	released := append(slices.Clone(st.Ending), r.Dropped...)
	slices.SortStableFunc(released, func(a, b v1alpha1.LockHolder) int { return a.Since.Compare(b.Since.Time) })
	st.Ending = nil
	for _, h := range released {
		namespace := v1alpha1.HolderNamespace(h, in.Lock)
		m := FindMember(in.Members, namespace, h.Group, h.GroupUID)
		switch {
		case !serves(in, namespace):
			st.Ending = append(st.Ending, h) // another installation's run, for it to judge
			continue
		case m == nil || m.Deleting:
			continue // a group gone records no run
		case m.Run != nil && m.Run.PodName == h.Pod:
			st.Ending = append(st.Ending, h) // its end is not recorded yet
			continue
		}
		it := groupspec.ItemStatusOf(m.Items, h.Item)
		if it == nil || it.LastPodName != h.Pod {
			continue // never ran
		}
		j := judge(h, it, m)
		if j.verdict == halving && answered(st.LastChange, h) {
			continue
		}
		r.step(in, spec, st, j)
	}
	st.CapacityInUse = int32(r.adaptiveInUse(in, st))
	r.Adaptive = st
}

// answered reports whether the last change was a halving that came after the run took its slot:
// that halving answered the strain the run saw, and the run does not halve the capacity again.
func answered(last *v1alpha1.AdaptiveChange, h v1alpha1.LockHolder) bool {
	return last != nil && last.Reason != v1alpha1.AdaptiveFastSuccesses && h.Since.Before(&last.At)
}

// adaptiveState is the lock's status.adaptive to start the review from: a new one at min, the
// capacity kept within the spec's min and max after an edit.
func adaptiveState(lock v1alpha1.Lock, spec *v1alpha1.AdaptiveCapacity) *v1alpha1.AdaptiveCapacityStatus {
	st := &v1alpha1.AdaptiveCapacityStatus{Capacity: int32(spec.MinOrDefault())}
	if cur := lock.Adaptive().Adaptive; cur != nil {
		st = cur.DeepCopy()
	}
	st.Capacity = min(max(st.Capacity, int32(spec.MinOrDefault())), max(spec.Max, int32(spec.MinOrDefault())))
	return st
}

// step applies one judged run to the adaptive state.
func (r *Review) step(in ReviewInput, spec *v1alpha1.AdaptiveCapacity, st *v1alpha1.AdaptiveCapacityStatus, j judgement) {
	inUse := r.adaptiveInUse(in, st)
	switch j.verdict {
	case unjudged:
		return
	case slowRun:
		st.FastSuccesses = 0
		return
	case fastRun:
		st.FastSuccesses++
		if st.FastSuccesses < v1alpha1.AdaptiveGrowAfter {
			return
		}
		st.FastSuccesses = 0
		if st.Capacity >= spec.Max || int(st.Capacity) >= r.Capacity.InForce {
			return // more would not be used: the spec or the capacity in force bounds it
		}
		r.change(in, st, inUse, st.Capacity+1, v1alpha1.AdaptiveFastSuccesses, corev1.EventTypeNormal,
			fmt.Sprintf("%d fast successes in a row, the last: %s", v1alpha1.AdaptiveGrowAfter, j.what))
	case halving:
		st.FastSuccesses = 0
		if to := max(halved(inUse), int32(spec.MinOrDefault())); to < st.Capacity {
			r.change(in, st, inUse, to, j.reason, corev1.EventTypeWarning, j.what)
		}
	}
}

// halved is half the capacity in use, rounded up: 5 gives 3, not 2, so that a target whose best
// capacity is 4 loses one slot, not two, when a probe of a fifth client strains it (rounded down,
// the law spent 5 more fast successes regaining each slot lost: 90 % of the best fixed capacity's
// runs in TestAdaptiveThroughput's queueing target, against 94 % rounded up).
func halved(inUse int) int32 { return int32((inUse + 1) / 2) }

// change sets the adaptive capacity to to, records why and reports it on the lock.
func (r *Review) change(in ReviewInput, st *v1alpha1.AdaptiveCapacityStatus, from int, to int32, reason v1alpha1.AdaptiveChangeReason, eventType, why string) {
	st.Capacity = to
	st.LastChange = &v1alpha1.AdaptiveChange{At: metav1.NewTime(in.Now), From: int32(from), To: to, Reason: reason, Message: message.Truncate(why, maxChangeMessage)}
	r.Events = append(r.Events, Event{Type: eventType, Reason: v1alpha1.ReasonCapacityAdapted, Message: fmt.Sprintf(
		"%s: adaptive capacity %d, was %d in use (%s): %s", v1alpha1.DescribeLocks([]string{in.Lock.LockKey()}), to, from, reason, why)})
}

// adaptiveInUse is the capacity the lock grants with the adaptive state st: its capacity, at most
// the capacity in force, and 1 while a breaker of the lock or of a group naming it is open.
func (r *Review) adaptiveInUse(in ReviewInput, st *v1alpha1.AdaptiveCapacityStatus) int {
	c := min(int(st.Capacity), r.Capacity.InForce)
	if isOpen(r.Breaker) || slices.ContainsFunc(in.Members, func(m Member) bool {
		return m.Names && m.Breaker != nil && m.Breaker.State == v1alpha1.BreakerOpen
	}) {
		c = min(c, 1)
	}
	return c
}

// capacityInUse is what the lock grants: the adaptive capacity in use with spec.adaptive, else
// the capacity in force.
func (r *Review) capacityInUse() int {
	if r.Adaptive != nil {
		return int(r.Adaptive.CapacityInUse)
	}
	return r.Capacity.InForce
}
