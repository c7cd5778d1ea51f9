package locks

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
)

// Member is a group as the review of a lock sees it: one that names the lock, or whose status
// names a holder of it.
type Member struct {
	// Namespace is the group's namespace.
	Namespace string
	// Name is the group's name.
	Name string
	// UID is the group's UID.
	UID string
	// Names says that the group names the lock (spec.locks or spec.clusterLocks).
	Names bool
	// Deleting says that the group is being deleted: it records no run and starts none.
	Deleting bool
	// Request is its status.lockWait.
	Request *v1alpha1.LockWait
	// Run is its status.currentRun.
	Run *v1alpha1.CurrentRun
	// RunEnded says that the current run's pod has ended: it is terminal, or, for a group being
	// deleted (which creates no pod), gone. A run whose pod has ended holds no slot, even while
	// the group's status still names it (a group whose new status the API server refuses, or one
	// being deleted, which records no run).
	RunEnded bool
	// Breaker is its status.circuitBreaker.
	Breaker *v1alpha1.CircuitBreakerStatus
	// Option is how its runs take the lock (spec.lockOptions); the zero option is Shared, one slot.
	Option v1alpha1.LockOption
	// Items is its status.items, where a lock with spec.adaptive reads the outcome of a run it
	// released.
	Items []v1alpha1.ItemStatus
	// Counting says which of its failures are the target's (its circuit breaker's counting).
	Counting groupspec.FailureCounting
}

// slots is how many slots the member's runs take: its option's, at least one.
func (m *Member) slots() int { return max(int(m.Option.Slots), 1) }

// exclusive reports whether the member's runs take the lock alone.
func (m *Member) exclusive() bool { return m.Option.Mode == v1alpha1.LockExclusive }

// HolderFacts is what the review knows of one holder of the lock beyond the members.
type HolderFacts struct {
	// Foreign says that the holder's group is of a namespace this installation does not serve (it
	// may not read it): its holder stays as it is, for its own installation to decide.
	Foreign bool
	// PodLive says that the holder's pod is live, as the API server shows it. Read only for a
	// holder whose group is gone (no member of its UID) or being deleted.
	PodLive bool
}

// ReviewInput is what the review of one lock reads.
type ReviewInput struct {
	// Lock is the lock as read.
	Lock v1alpha1.Lock
	// Members are the groups naming the lock, and those of its holders that exist and no longer
	// name it, with their UID: a holder whose group has another UID, or none, is of a group gone.
	Members []Member
	// Holders are the facts of the lock's holders, in the order of Lock.LockHolders().
	Holders []HolderFacts
	// Now is the time of the review.
	Now time.Time
	// Installation names the installation that reviews (InstallationOf), empty for one that
	// watches all namespaces.
	Installation string
	// AdoptionWindow is how long a ClusterOaatLock grants nothing to an installation of some
	// namespaces after its creation (AdoptedAt).
	AdoptionWindow time.Duration
	// Namespaces are those the installation serves, empty for all: the entries of a
	// ClusterOaatLock's status.passedOver of other namespaces stay as they are.
	Namespaces []string
}

// Review is the lock's new status, as its one writer decides it.
type Review struct {
	// Holders are its new holders.
	Holders []v1alpha1.LockHolder
	// Breaker is its new status.circuitBreaker.
	Breaker *v1alpha1.LockCircuitBreakerStatus
	// WaitingGroups is its new status.waitingGroups: how many groups naming it wait; as it was
	// when an installation of some namespaces reviews a ClusterOaatLock (it writes Waiting).
	WaitingGroups int32
	// Waiting is the installation's entry of a ClusterOaatLock's status.installationClaims, as of
	// now: nil when none of its groups waits, and for an installation of all namespaces.
	Waiting *v1alpha1.InstallationWaiting
	// Granted are the holders added for requests, Asserted those added for runs the lock did not
	// list, Dropped those removed: for the log, the metrics and the group wake-ups.
	Granted, Asserted, Dropped []v1alpha1.LockHolder
	// Events are what the review reports: the breaker's opening and closing on the lock, a run
	// listed over the capacity on its group.
	Events []Event
	// Pending says that a holder stays for a pod still live of a group gone or being deleted: the
	// lock is reviewed again soon.
	Pending bool
	// RetryAt is when the lock must be reviewed again for time alone (the end of its adoption
	// window, the next change of its capacity), zero for never.
	RetryAt time.Time
	// Capacity is the lock's capacity in force and its next change (spec.capacitySchedule).
	Capacity Capacity
	// PassedOver is its new status.passedOver: the waiting requests it passed over for priority.
	PassedOver []v1alpha1.PassedOver
	// Adaptive is its new status.adaptive, nil without spec.adaptive.
	Adaptive *v1alpha1.AdaptiveCapacityStatus
}

// Event is an event the review reports.
type Event struct {
	// Group is the group it is about; empty for the lock itself.
	Group types.NamespacedName
	// GroupUID is that group's UID.
	GroupUID string
	// Type is Normal or Warning.
	Type string
	// Reason is its reason.
	Reason v1alpha1.Reason
	// Message is its message.
	Message string
}

// Decide reviews a lock: the holders that stay (keep), the live runs it lacks (assert), the
// breaker it carries (leadBreaker), its adaptive capacity from the runs it released (adapt), the
// requests it grants (grant), in the one global order, and how many groups wait for it.
func Decide(in ReviewInput) Review {
	r := Review{Breaker: in.Lock.LockBreaker(), WaitingGroups: in.Lock.LockWaitingGroups(), Capacity: CapacityAt(in.Lock, in.Now),
		PassedOver: in.Lock.Queue().PassedOver}
	if !in.Lock.CarriesBreaker() {
		r.Breaker = nil
	}
	r.schedule(in)
	r.keep(in)
	r.assert(in)
	r.leadBreaker(in)
	r.adapt(in)
	r.grant(in)
	r.count(in)
	SortHolders(r.Holders)
	return r
}

// FindMember is the member of that namespace, name and UID; nil when there is none (of a holder:
// its group is gone).
func FindMember(members []Member, namespace, name, uid string) *Member {
	for i := range members {
		if m := &members[i]; m.Namespace == namespace && m.Name == name && m.UID == uid {
			return m
		}
	}
	return nil
}

// keep keeps the holders whose group's status still names their pod: as its live current run, or,
// for a group not being deleted, as its request; and those whose pod is live, of a group gone or
// being deleted. The review sees the group at least as late as the state whose request the lock
// granted (the cache of one process moves forward, and a new process lists it afresh): a status
// that names the pod neither way is a later one, in which the run has ended (a group records a
// run's end once its pod has ended) or the request changed; the group's start, which writes its
// current run, is conditional on the status it decided from, so it cannot follow a change of its
// request.
func (r *Review) keep(in ReviewInput) {
	key := in.Lock.LockKey()
	for i, h := range in.Lock.LockHolders() {
		facts := in.Holders[i]
		m := FindMember(in.Members, v1alpha1.HolderNamespace(h, in.Lock), h.Group, h.GroupUID)
		switch {
		case facts.Foreign:
		case m != nil && m.Run != nil && m.Run.PodName == h.Pod && !m.RunEnded:
			r.Pending = r.Pending || m.Deleting
		case m != nil && !m.Deleting:
			if !Requests(m.Request, key, h.Pod) {
				r.Dropped = append(r.Dropped, h)
				continue
			}
		case facts.PodLive:
			r.Pending = true
		default:
			r.Dropped = append(r.Dropped, h)
			continue
		}
		r.Holders = append(r.Holders, h)
	}
}

// assert lists the current run of each group naming the lock that it lacks (the lock was created
// again, or named by an edit while the run went on) while its pod has not ended: the run's pod is
// live whatever the lock says, so it counts, over the capacity if need be, and no request is
// granted until enough runs have ended.
func (r *Review) assert(in ReviewInput) {
	for i := range in.Members {
		m := &in.Members[i]
		if !m.Names || m.Run == nil || m.RunEnded || Lists(r.lock(in), m.Namespace, m.Name, m.Run.PodName) || r.holds(in, m) {
			continue
		}
		h := holderIn(withOption(v1alpha1.LockHolder{Group: m.Name, GroupUID: m.UID, Item: m.Run.Item, Pod: m.Run.PodName, Since: m.Run.StartedAt}, m), in.Lock, m.Namespace)
		r.Holders = append(r.Holders, h)
		r.Asserted = append(r.Asserted, h)
		if over := beyondCapacity(r.Holders, r.Capacity.InForce); over != "" {
			r.Events = append(r.Events, Event{Group: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}, GroupUID: m.UID, Type: corev1.EventTypeWarning,
				Reason: v1alpha1.ReasonLockOverCapacity, Message: fmt.Sprintf(
					"%s holds %s: the run of item %q (pod %s) started before the lock listed it; no group naming it starts until enough of its runs have ended",
					v1alpha1.DescribeLocks([]string{in.Lock.LockKey()}), over, m.Run.Item, m.Run.PodName)})
		}
	}
}

// schedule reviews the lock again when its capacity changes, and reports a schedule it could not
// read.
func (r *Review) schedule(in ReviewInput) {
	if c := r.Capacity; c.Err != nil {
		r.Events = append(r.Events, Event{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonCapacityScheduleInvalid, Message: fmt.Sprintf(
			"%s: %v; the smallest capacity the lock names anywhere, %d, is in force until the schedule is fixed",
			v1alpha1.DescribeLocks([]string{in.Lock.LockKey()}), c.Err, c.InForce)})
	}
	if !r.Capacity.NextAt.IsZero() {
		r.retryAt(r.Capacity.NextAt)
	}
}

// retryAt reviews the lock again at t at the latest.
func (r *Review) retryAt(t time.Time) {
	if r.RetryAt.IsZero() || t.Before(r.RetryAt) {
		r.RetryAt = t
	}
}

// lock is the lock with the holders decided so far.
func (r *Review) lock(in ReviewInput) v1alpha1.Lock {
	l := in.Lock.DeepCopyObject().(v1alpha1.Lock)
	l.SetLockHolders(r.Holders)
	return l
}

// holds reports whether a holder decided so far is of the member's group (of any pod): a group
// holds at most one slot of a lock.
func (r *Review) holds(in ReviewInput, m *Member) bool {
	return slices.ContainsFunc(r.Holders, func(h v1alpha1.LockHolder) bool {
		return h.Group == m.Name && v1alpha1.HolderNamespace(h, in.Lock) == m.Namespace
	})
}

// grant lists the requests that get their slots: in the global order of their places (promoted
// first, then by priority, then by the time of waiting; queuePlace), each gets
// them while the free slots (Slots, less those the holders take) cover its own and those of the
// places before it, its own installation's and, for a ClusterOaatLock, those of other
// installations that still count (one each). A group's request keeps its place while an earlier
// one waits for another lock, so that a group needing two locks is not starved by groups needing
// one. An exclusive request is granted only when the lock has no holder and no place before it,
// and its place holds every slot, so no later request is granted while it waits; nothing is
// granted beside an exclusive holder. A request needing more slots than the lock has in force, or
// asking what the lock does not allow, waits without a place. An installation of some namespaces
// grants nothing within a ClusterOaatLock's adoption window (AdoptedAt). The requests passed over
// for priority are counted (passes).
func (r *Review) grant(in ReviewInput) {
	if adopted := AdoptedAt(in.Lock, in.Installation, in.AdoptionWindow); in.Now.Before(adopted) {
		r.retryAt(adopted)
		return
	}
	key := in.Lock.LockKey()
	var waiting []*Member
	for i := range in.Members {
		m := &in.Members[i]
		if m.Names && !m.Deleting && m.Request != nil && Requests(m.Request, key, m.Request.Pod) && !r.holds(in, m) {
			waiting = append(waiting, m)
		}
	}
	q, places := QueueOf(in.Lock), map[*Member]Place{}
	for _, m := range waiting {
		places[m] = q.Place(m.Namespace, m.Name, m.Request)
	}
	slices.SortFunc(waiting, func(a, b *Member) int { return places[a].Compare(places[b]) })
	total := Slots(in.Lock, r.Breaker, r.capacityInUse())
	free := total - UsedSlots(r.Holders)
	if slices.ContainsFunc(r.Holders, func(h v1alpha1.LockHolder) bool { return h.Exclusive() }) {
		free = 0
	}
	before := 0
	placed := map[*Member]bool{}
	for _, m := range waiting {
		need := m.slots()
		if probing(in.Lock, r.Breaker) {
			need = 1 // one probe at a time, whatever the slots its runs take
		}
		if !Allows(in.Lock, m.Option) || need > total || (m.exclusive() && total == 0) {
			continue
		}
		placed[m] = true
		ahead := before + r.foreignBefore(in, m)
		if m.exclusive() {
			need = total
		}
		before += need
		if ahead+need > free {
			continue
		}
		h := holderIn(withOption(v1alpha1.LockHolder{Group: m.Name, GroupUID: m.UID, Item: m.Request.Item, Pod: m.Request.Pod, Since: metav1.NewTime(in.Now)}, m), in.Lock, m.Namespace)
		r.Granted = append(r.Granted, h)
	}
	r.Holders = append(r.Holders, r.Granted...)
	r.passes(in, q, waiting, placed)
}

// foreignBefore counts the waiting of other installations on a ClusterOaatLock that still count
// and began before the member's request. Against another installation's entry, the member's place
// is its installation's: both installations then order the two alike, a tie of their times by
// their names.
func (r *Review) foreignBefore(in ReviewInput, m *Member) int {
	cl, ok := in.Lock.(*v1alpha1.ClusterOaatLock)
	if !ok || in.Installation == "" {
		// An installation of all namespaces sees every waiter itself.
		return 0
	}
	ours := Place{Since: m.Request.Since.Time, Group: in.Installation}
	n := 0
	for _, w := range cl.Status.InstallationsWaiting {
		theirs := Place{Since: w.Since.Time, Group: w.Installation}
		if w.Installation != in.Installation && Counts(w, in.Now) && theirs.Before(ours) {
			n++
		}
	}
	return n
}

// count counts the groups naming the lock that wait (status.waitingGroups), or, for an
// installation of some namespaces reviewing a ClusterOaatLock, its own entry of the waiting.
func (r *Review) count(in ReviewInput) {
	var n int32
	var oldest *metav1.Time
	for i := range in.Members {
		m := &in.Members[i]
		if m.Names && !m.Deleting && m.Request != nil {
			n++
			if oldest == nil || m.Request.Since.Before(oldest) {
				oldest = &m.Request.Since
			}
		}
	}
	if _, ok := in.Lock.(*v1alpha1.ClusterOaatLock); !ok || in.Installation == "" {
		r.WaitingGroups = n
		return
	}
	if n > 0 {
		r.Waiting = &v1alpha1.InstallationWaiting{Installation: in.Installation, Waiting: n, Since: *oldest, RenewedAt: metav1.NewTime(in.Now)}
	}
}

// withOption is the holder with the slots and mode of the member's option: slots only when more
// than one, the mode only when Exclusive.
func withOption(h v1alpha1.LockHolder, m *Member) v1alpha1.LockHolder {
	if n := m.slots(); n > 1 && !m.exclusive() {
		h.Slots = int32(n)
	}
	if m.exclusive() {
		h.Mode = v1alpha1.LockExclusive
	}
	return h
}

// beyondCapacity says how the holders go over the capacity: more slots than it, or an exclusive
// holder beside others; empty when they do not.
func beyondCapacity(holders []v1alpha1.LockHolder, capacity int) string {
	runs, used := fmt.Sprintf("%d runs", len(holders)), UsedSlots(holders)
	if used != len(holders) {
		runs += fmt.Sprintf(" taking %d slots", used)
	}
	switch {
	case used > capacity:
		return fmt.Sprintf("%s, over its capacity of %d", runs, capacity)
	case len(holders) > 1 && slices.ContainsFunc(holders, func(h v1alpha1.LockHolder) bool { return h.Exclusive() }):
		return runs + ", one of them exclusive"
	}
	return ""
}

// UsedSlots is how many slots the holders take.
func UsedSlots(holders []v1alpha1.LockHolder) int {
	n := 0
	for _, h := range holders {
		n += h.SlotsOrOne()
	}
	return n
}

// holderIn is the holder as the lock stores it: a ClusterOaatLock's holders name their group's
// namespace, an OaatLock's are of its own.
func holderIn(h v1alpha1.LockHolder, lock v1alpha1.Lock, namespace string) v1alpha1.LockHolder {
	if lock.GetNamespace() == "" {
		h.Namespace = namespace
	}
	return h
}

// Lists reports whether the lock lists the run of pod of the group of that namespace and name
// among its holders.
func Lists(lock v1alpha1.Lock, namespace, group, pod string) bool {
	return slices.ContainsFunc(lock.LockHolders(), func(h v1alpha1.LockHolder) bool {
		return h.Group == group && h.Pod == pod && v1alpha1.HolderNamespace(h, lock) == namespace
	})
}

// SortHolders orders a lock's holders by group name, then namespace, as the lock's status keeps
// them.
func SortHolders(holders []v1alpha1.LockHolder) {
	slices.SortFunc(holders, func(a, b v1alpha1.LockHolder) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Namespace, b.Namespace))
	})
}
