package forecast

import (
	"container/heap"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// A plain group is one whose passes after the first can only record the success of its run and
// start the next by the schedule: it is Ready, due by frequency (no spec.schedule, not EachOnce),
// not suspended, without blackout windows, locks, verifications (spec.verify) or on-demand runs,
// its breaker not open, no run timeout its runs reach, and no live pod but its current run's.
// Each pass of Decide reads every
// item; for such a group the forecast plays the same passes without it, from the schedule's own
// rules (schedule.Timing.EligibleAt, schedule.Choose, planner.ScheduleItem) over the items' times
// kept in two heaps: the items waiting, by the instant they may start, and the items due, by their
// last success and last failure. A run costs O(log n) instead of a pass over n items, and the runs,
// the passes and the stop are those of the replay (TestPlainMatchesReplay).

// plain reports whether the group after the first pass is plain.
func (s *simulation) plain(p groupspec.Policy, err error) bool {
	g := &s.group
	st := &g.Status
	switch {
	case s.opts.Replay, err != nil, !p.Calendar.IsZero(), p.EachOnce, p.Suspended != "", len(p.Timing.Windows) > 0,
		len(s.runs) > 0, len(g.Spec.LockKeys()) > 0, st.LockWait != nil, g.Spec.Verify != nil, st.PendingVerification != nil,
		st.CircuitBreaker != nil && st.CircuitBreaker.State == v1alpha1.BreakerOpen,
		!meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReady):
		return false
	}
	var longest time.Duration
	for _, d := range s.runEnds {
		longest = max(longest, d)
	}
	limits := []time.Duration{p.RunTimeout, p.PendingTimeout}
	if p.Learned != nil {
		// An item's learned timeout is at least twice its longest kept run, the run time the
		// forecast assumes for it, unless capped at max, and max for an item that kept none (and
		// is assumed to take the group's median): only max can stop a predicted run.
		limits = append(limits, p.Learned.Max)
	}
	for _, limit := range limits {
		if limit > 0 && limit <= longest {
			return false
		}
	}
	current := ""
	if cr := st.CurrentRun; cr != nil {
		if pod := s.pod(cr.PodName); s.running < 0 || pod == nil || podbuild.Terminal(pod) {
			return false
		}
		current = cr.PodName
	}
	for i := range s.pods {
		if s.pods[i].Name != current && !podbuild.Terminal(&s.pods[i]) {
			return false
		}
	}
	return true
}

// plainItem is an item of a plain group as the forecast plays it.
type plainItem struct {
	// index is the item's place in status, the order of the schedule's ties.
	index int
	item  schedule.Item
	// at is when the item may start (schedule.Timing.EligibleAt).
	at time.Time
}

// plainPlay is the state of a plain group's forecast after its first pass.
type plainPlay struct {
	s      *simulation
	timing schedule.Timing
	// breaker is the circuit breaker in force, nil without spec.circuitBreaker.
	breaker *v1alpha1.CircuitBreakerStatus
	waiting byStart
	due     byHistory
	// current is the item whose run is going, nil when none.
	current *plainItem
	ties    []schedule.Item
}

// runPlain plays a plain group's passes after the first (created says that it created a pod) to
// the same stop as run.
func (s *simulation) runPlain(timing schedule.Timing, created bool) {
	p := s.newPlainPlay(timing)
	f := &s.forecast
	for {
		next, ok := p.next(created)
		if f.Stop = s.stopBefore(next, ok); f.Stop != "" {
			return
		}
		s.now = next
		f.Passes++
		created = p.pass()
	}
}

func (s *simulation) newPlainPlay(timing schedule.Timing) *plainPlay {
	p := &plainPlay{s: s, timing: timing}
	if s.group.Spec.CircuitBreaker != nil {
		p.breaker = s.group.Status.CircuitBreaker
	}
	cr := s.group.Status.CurrentRun
	for i := range s.group.Status.Items {
		it := &s.group.Status.Items[i]
		pi := &plainItem{index: i, item: planner.ScheduleItem(p.breaker, it)}
		switch {
		case cr != nil && cr.Item == it.Name:
			p.current = pi
		case it.WaitReason == v1alpha1.WaitRemoved || it.WaitReason == v1alpha1.WaitParked:
		default:
			p.queue(pi)
		}
	}
	return p
}

// queue puts an item among the waiting or the due items.
func (p *plainPlay) queue(pi *plainItem) {
	pi.at, _ = p.timing.EligibleAt(pi.item)
	if pi.at.After(p.s.now) {
		heap.Push(&p.waiting, pi)
	} else {
		heap.Push(&p.due, pi)
	}
}

// next is when the next pass happens, as simulation.nextEvent says for a plain group: at once
// after a pod's creation, the expected end of the run going, else the first waiting item's start.
func (p *plainPlay) next(created bool) (time.Time, bool) {
	switch {
	case created:
		return p.s.now, true
	case p.current != nil:
		return later(p.s.expectedEnd(), p.s.now), true
	case len(p.waiting) > 0:
		return p.waiting[0].at, true
	}
	return time.Time{}, false
}

// pass plays a pass at the simulation's time: the run going succeeds when its time has come, and
// when nothing runs the schedule's choice among the due items starts; it reports whether it did.
func (p *plainPlay) pass() (created bool) {
	s := p.s
	if p.current != nil {
		end := s.expectedEnd()
		if end.After(s.now) {
			return false
		}
		if pod := s.pod(s.group.Status.CurrentRun.PodName); pod != nil {
			end = later(end, pod.CreationTimestamp.Time) // its container ends once it exists (advance)
		}
		s.end(v1alpha1.ResultSucceeded)
		p.current.item.LastSuccess, p.current.item.FailureCount = end, 0
		p.queue(p.current)
		p.current = nil
		s.group.Status.CurrentRun = nil
	}
	for len(p.waiting) > 0 && !p.waiting[0].at.After(s.now) {
		heap.Push(&p.due, heap.Pop(&p.waiting))
	}
	if len(p.due) == 0 {
		return false
	}
	p.start(p.choose())
	return true
}

// choose takes the schedule's choice out of the due items: of those with the oldest last success
// and last failure, schedule.Choose's pick.
func (p *plainPlay) choose() (chosen *plainItem, ties int) {
	first := heap.Pop(&p.due).(*plainItem)
	tied := []*plainItem{first}
	for len(p.due) > 0 && p.due[0].item.LastSuccess.Equal(first.item.LastSuccess) && p.due[0].item.LastFailure.Equal(first.item.LastFailure) {
		tied = append(tied, heap.Pop(&p.due).(*plainItem))
	}
	if len(tied) == 1 {
		return first, 0
	}
	p.ties = p.ties[:0]
	for _, pi := range tied {
		p.ties = append(p.ties, pi.item)
	}
	pick, _ := schedule.Choose(p.ties, p.s.rand, "")
	for _, pi := range tied {
		if pi.item.Name == pick.Name {
			chosen = pi
		} else {
			heap.Push(&p.due, pi)
		}
	}
	return chosen, len(tied)
}

// start starts the run of the chosen item now, its pod running.
func (p *plainPlay) start(chosen *plainItem, ties int) {
	s := p.s
	p.current = chosen
	s.running = len(s.forecast.Runs)
	s.forecast.Runs = append(s.forecast.Runs, Run{Item: chosen.item.Name, Start: s.now, Ties: ties})
	s.group.Status.CurrentRun = &v1alpha1.CurrentRun{Item: chosen.item.Name}
}

// byStart orders items by the instant they may start, then their place in status.
type byStart []*plainItem

func (h byStart) Len() int { return len(h) }
func (h byStart) Less(i, j int) bool {
	if c := h[i].at.Compare(h[j].at); c != 0 {
		return c < 0
	}
	return h[i].index < h[j].index
}
func (h byStart) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *byStart) Push(x any)   { *h = append(*h, x.(*plainItem)) }
func (h *byStart) Pop() any     { return pop(h) }

// byHistory orders items as the schedule chooses: the oldest last success, then the oldest last
// failure (the zero time first), then their place in status.
type byHistory []*plainItem

func (h byHistory) Len() int { return len(h) }
func (h byHistory) Less(i, j int) bool {
	a, b := &h[i].item, &h[j].item
	if c := a.LastSuccess.Compare(b.LastSuccess); c != 0 {
		return c < 0
	}
	if c := a.LastFailure.Compare(b.LastFailure); c != 0 {
		return c < 0
	}
	return h[i].index < h[j].index
}
func (h byHistory) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *byHistory) Push(x any)   { *h = append(*h, x.(*plainItem)) }
func (h *byHistory) Pop() any     { return pop(h) }

func pop[H ~[]*plainItem](h *H) any {
	old := *h
	last := old[len(old)-1]
	*h = old[:len(old)-1]
	return last
}
