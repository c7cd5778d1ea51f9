package statusview

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	lockspolicy "github.com/oaat-io/oaat-operator/internal/locks"
)

// WriteLocks writes a table of the locks, one row per lock (capacity in force, holders, waiting
// groups), then a line per lock that has a capacity schedule, is held, waited for or whose carried
// circuit breaker is open: its capacity by the schedule and the next change, its holders, its
// breaker, and the groups that wait for it, longest first. The waiting groups are those whose status.lockWait is set and that name the lock.
// A ClusterOaatLock shows as ClusterOaatLock/name, its holders as namespace/group; its waiting
// count is that of its status (groups of every namespace) when the groups given, of one
// namespace, show fewer.
func WriteLocks(w io.Writer, locks []v1alpha1.Lock, groups []v1alpha1.OaatGroup, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCK\tCAPACITY\tHOLDERS\tWAITING")
	var details []string
	for _, l := range locks {
		cluster := l.GetNamespace() == ""
		queue := lockspolicy.QueueOf(l)
		waiting := waitersOf(l, queue, groups)
		count := len(waiting)
		if cluster {
			count = max(count, int(l.LockWaitingGroups()))
		}
		capacity := lockspolicy.CapacityAt(l, now)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", Item(l.LockKey()), capacity.InForce, len(l.LockHolders()), count)
		var parts []string
		if len(l.CapacityWindows()) > 0 {
			parts = append(parts, scheduledCapacity(l, capacity, now))
		}
		if a := l.Adaptive().Adaptive; l.AdaptiveSpec() != nil && a != nil {
			parts = append(parts, adaptiveCapacity(l.AdaptiveSpec(), a, now))
		}
		for _, h := range l.LockHolders() {
			holder := h.Group
			if cluster {
				holder = h.Namespace + "/" + h.Group
			}
			taking := ""
			switch {
			case h.Exclusive():
				taking = ", exclusive"
			case h.SlotsOrOne() > 1:
				taking = fmt.Sprintf(", %d slots", h.SlotsOrOne())
			}
			parts = append(parts, fmt.Sprintf("held by %s (item %s, pod %s, for %s%s)", Item(holder), Item(h.Item), Item(h.Pod), age(h.Since.Time, now), taking))
		}
		if cb := l.LockBreaker(); l.CarriesBreaker() && cb != nil && cb.State == v1alpha1.BreakerOpen {
			parts = append(parts, lockBreaker(cb, now))
		}
		if len(waiting) > 0 {
			names := make([]string, 0, len(waiting))
			for _, g := range waiting {
				names = append(names, fmt.Sprintf("%s (%s%s)", Item(g.Name), age(g.Status.LockWait.Since.Time, now), queueNote(queue, g)))
			}
			parts = append(parts, "waiting: "+strings.Join(names, ", "))
		}
		if len(parts) > 0 {
			details = append(details, Item(l.LockKey())+": "+strings.Join(parts, "; "))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(details) > 0 {
		_, err := fmt.Fprintf(w, "\n%s\n", strings.Join(details, "\n"))
		return err
	}
	return nil
}

// scheduledCapacity says what a lock's capacity schedule puts in force: the capacity now, until
// when and what follows, and the runs above it that drain.
func scheduledCapacity(l v1alpha1.Lock, c lockspolicy.Capacity, now time.Time) string {
	s := fmt.Sprintf("capacity %d by spec.capacitySchedule (spec.capacity %d)", c.InForce, l.CapacityOrDefault())
	switch {
	case c.Err != nil:
		s = fmt.Sprintf("capacity %d: the schedule cannot be read (%v)", c.InForce, c.Err)
	case !c.NextAt.IsZero():
		s += fmt.Sprintf(", %d from %s (in %s)", c.Next, clock(c.NextAt), age(now, c.NextAt))
	}
	if over := lockspolicy.UsedSlots(l.LockHolders()) - c.InForce; over > 0 {
		s += fmt.Sprintf(", %d slot(s) held above it, draining", over)
	}
	return s
}

// adaptiveCapacity says what a lock's adaptive capacity grants, within what, and its last change.
func adaptiveCapacity(spec *v1alpha1.AdaptiveCapacity, a *v1alpha1.AdaptiveCapacityStatus, now time.Time) string {
	s := fmt.Sprintf("adaptive capacity %d in use (%d of %d to %d, %d fast successes)", a.CapacityInUse, a.Capacity, spec.MinOrDefault(), spec.Max, a.FastSuccesses)
	if c := a.LastChange; c != nil {
		s += fmt.Sprintf(", changed %s ago from %d to %d (%s: %s)", age(c.At.Time, now), c.From, c.To, c.Reason, Item(c.Message))
	}
	return s
}

// lockBreaker says that the breaker a lock carries is open: since when, opened by which group,
// its failed probes and when the next probe may start.
func lockBreaker(cb *v1alpha1.LockCircuitBreakerStatus, now time.Time) string {
	s := fmt.Sprintf("circuit breaker OPEN, opened by %s", Item(cb.OpenedBy))
	if cb.OpenedAt != nil {
		s += " " + age(cb.OpenedAt.Time, now) + " ago"
	}
	s += fmt.Sprintf(", failed probes: %d", cb.FailedProbes)
	if cb.NextProbeAt != nil && cb.NextProbeAt.After(now) {
		s += ", next probe in " + age(now, cb.NextProbeAt.Time)
	}
	return s
}

// waitersOf are the groups that wait for the lock, in the order of its queue q (locks.Queue.Place):
// promoted first, then by the priority it honours, then the longest waiting first.
func waitersOf(lock v1alpha1.Lock, q lockspolicy.Queue, groups []v1alpha1.OaatGroup) []*v1alpha1.OaatGroup {
	var waiting []*v1alpha1.OaatGroup
	for i := range groups {
		if w := groups[i].Status.LockWait; w != nil && slices.Contains(groups[i].Spec.LockKeys(), lock.LockKey()) {
			waiting = append(waiting, &groups[i])
		}
	}
	place := func(g *v1alpha1.OaatGroup) lockspolicy.Place {
		return q.Place(g.Namespace, g.Name, g.Status.LockWait)
	}
	slices.SortStableFunc(waiting, func(a, b *v1alpha1.OaatGroup) int { return place(a).Compare(place(b)) })
	return waiting
}

// queueNote says what orders a waiting group in the lock's queue beyond its time: the priority
// the lock honours, its promotion, how often the lock passed it over; empty when none.
func queueNote(q lockspolicy.Queue, g *v1alpha1.OaatGroup) string {
	w := g.Status.LockWait
	var notes []string
	if p := q.Place(g.Namespace, g.Name, w); p.Promoted {
		notes = append(notes, "promoted")
	} else if p.Priority > 0 {
		notes = append(notes, fmt.Sprintf("priority %d", p.Priority))
	}
	if n := q.PassedOver(g.Namespace, g.Name, *w); n > 0 {
		notes = append(notes, fmt.Sprintf("passed over %d of %d", n, v1alpha1.PassLimit))
	}
	if len(notes) == 0 {
		return ""
	}
	return ", " + strings.Join(notes, ", ")
}
