package forecast

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// observe reads a pass's plan: the runs it ends and starts, and the round.
func (s *simulation) observe(plan planner.Plan) {
	f := &s.forecast
	for _, o := range plan.Finished {
		if s.running >= 0 && f.Runs[s.running].Item == o.Item {
			s.end(o.Result)
		}
	}
	for _, v := range plan.Verified {
		if s.running >= 0 && f.Runs[s.running].Item == v.Item && f.Runs[s.running].Verify {
			s.end(v.Result)
		}
	}
	cr := plan.Status.CurrentRun
	switch {
	case plan.Create != nil && cr != nil:
		run := Run{Item: cr.Item, Start: s.now, OnDemandRun: cr.OaatRun, Verify: cr.Purpose == v1alpha1.PurposeVerify}
		if s.rand.calls > 0 {
			run.Ties = s.rand.n
		}
		s.running = len(f.Runs)
		f.Runs = append(f.Runs, run)
	case f.Passes == 1 && cr != nil:
		s.running = len(f.Runs)
		f.Runs = append(f.Runs, Run{Item: cr.Item, Start: cr.StartedAt.Time, OnDemandRun: cr.OaatRun, Going: true,
			Verify: cr.Purpose == v1alpha1.PurposeVerify})
	}
	s.observeRound(&plan.Status)
}

// observeRound follows the round in status: a new one, its end, its wait for a blackout window.
func (s *simulation) observeRound(st *v1alpha1.OaatGroupStatus) {
	spec := &s.group.Spec
	if spec.Mode != v1alpha1.ModeEachOnce && spec.Schedule == "" {
		return
	}
	started := s.group.CreationTimestamp.Time
	if st.RoundStartedAt != nil {
		started = st.RoundStartedAt.Time
	} else if spec.Schedule != "" {
		return // no tick has come yet
	}
	f := &s.forecast
	if n := len(f.Rounds); n == 0 || !f.Rounds[n-1].StartedAt.Equal(started) {
		if n > 0 && f.Rounds[n-1].EndsAt.IsZero() {
			f.Rounds[n-1].Overrun = true
		}
		f.Rounds = append(f.Rounds, Round{StartedAt: started})
	}
	round := &f.Rounds[len(f.Rounds)-1]
	if st.NextRoundAt != nil {
		round.NextRoundAt = st.NextRoundAt.Time
	}
	if !round.EndsAt.IsZero() {
		return
	}
	pending, blackout := false, false
	var last time.Time
	for i := range st.Items {
		it := &st.Items[i]
		switch it.WaitReason {
		case v1alpha1.WaitDone, v1alpha1.WaitNextTick, v1alpha1.WaitParked, v1alpha1.WaitRemoved:
			if it.LastSuccess != nil && it.LastSuccess.After(last) {
				last = it.LastSuccess.Time
			}
		case v1alpha1.WaitBlackout, v1alpha1.WaitOverrun:
			pending, blackout = true, true
		case v1alpha1.WaitRunning, v1alpha1.WaitSucceededRecently, v1alpha1.WaitCoolingOff, v1alpha1.WaitSuspended,
			v1alpha1.WaitLockHeld, v1alpha1.WaitBreakerOpen, "":
			pending = true
		}
	}
	switch {
	case !pending:
		round.EndsAt = later(last, started)
	case blackout && st.CurrentRun == nil && round.BlackoutAt.IsZero():
		round.BlackoutAt = s.now
	}
}

// apply makes the pass's plan happen to the simulated objects, as the controller would: the
// status written, the pods created (running from now) and deleted, the OaatRuns and locks updated.
func (s *simulation) apply(plan planner.Plan) {
	s.group.Status = plan.Status
	gone := map[string]bool{}
	for _, d := range plan.Delete {
		gone[d.Pod.Name] = true
	}
	for _, p := range plan.DeleteBatch {
		gone[p.Name] = true
	}
	s.pods = slices.DeleteFunc(s.pods, func(p corev1.Pod) bool { return gone[p.Name] })
	if plan.Create != nil {
		pod := *plan.Create.DeepCopy()
		started := metav1.NewTime(s.now)
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started}
		s.pods = append(s.pods, pod)
	}
	for _, updates := range [][]planner.OnDemandRunUpdate{plan.FinalOnDemandRuns, plan.OpenOnDemandRuns} {
		for _, u := range updates {
			for i := range s.runs {
				if s.runs[i].Name == u.OnDemandRun.Name {
					s.runs[i].Status = u.Status
				}
			}
		}
	}
	s.reviewLocks()
}

// reviewLocks plays the review of each lock the group names after the pass, as the lock's
// reconciler would (locks.Decide): the group's request granted when the lock has room for it, its
// slot dropped once its run has ended. The other groups' holders stay as they are, and their
// requests keep their places.
func (s *simulation) reviewLocks() {
	for key, lock := range s.locks {
		if lock == nil {
			continue
		}
		in := locks.ReviewInput{Lock: lock, Now: s.now, Members: []locks.Member{{
			Namespace: s.group.Namespace, Name: s.group.Name, UID: string(s.group.UID), Names: true,
			Request: s.group.Status.LockWait, Run: s.group.Status.CurrentRun, Breaker: s.group.Status.CircuitBreaker,
			Option: s.group.Spec.LockOptionFor(key),
		}}}
		for _, w := range s.in.Locks.Waiters {
			if slices.Contains(w.Locks, key) {
				in.Members = append(in.Members, locks.Member{Namespace: w.Namespace, Name: w.Group, Names: true,
					Request: w.Request()})
			}
		}
		for _, h := range lock.LockHolders() {
			in.Holders = append(in.Holders, locks.HolderFacts{Foreign: h.GroupUID != string(s.group.UID)})
		}
		review := locks.Decide(in)
		reviewed := lock.DeepCopyObject().(v1alpha1.Lock)
		reviewed.SetLockHolders(review.Holders)
		reviewed.SetLockBreaker(review.Breaker)
		reviewed.Queue().PassedOver = review.PassedOver
		s.locks[key] = reviewed
	}
}

// granted reports whether the group waits for locks that all grant its request: the locks'
// change wakes it at once.
func (s *simulation) granted() bool {
	w := s.group.Status.LockWait
	in := s.in.Locks
	in.Locks = s.locks
	return w != nil && locks.Request(&s.group, in, w, w.Item, w.Pod, s.now) == nil
}

// nextEvent is when the next pass happens: the wake-up the plan asks for, the expected end of the
// run in progress, or at once after a pod's creation, when the current run has no live pod (it
// was stopped, or the controller would find it gone) or when the locks grant the group's request;
// false when nothing would wake the group.
func (s *simulation) nextEvent(plan planner.Plan) (time.Time, bool) {
	var next time.Time
	at := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	if plan.RequeueAfter > 0 {
		at(s.now.Add(plan.RequeueAfter))
	}
	if plan.Create != nil || s.granted() {
		// The new pod's events (its scheduling, its start) wake the group at once: the pass that
		// sees the run going asks for its stops (spec.runTimeout, a stopRunning window).
		at(s.now)
	}
	if change := s.capacityChange(); !change.IsZero() {
		at(change)
	}
	if cr := s.group.Status.CurrentRun; cr != nil {
		if pod := s.pod(cr.PodName); pod == nil || podbuild.Terminal(pod) {
			at(s.now)
		} else if s.running >= 0 {
			at(later(s.expectedEnd(), s.now))
		}
	}
	return next, !next.IsZero()
}

// capacityChange is, while the group waits for locks that do not grant its request, the next rise
// of the capacity in force of one of them within the forecast (spec.capacitySchedule), when the
// lock may grant it; zero when none comes.
func (s *simulation) capacityChange() time.Time {
	w := s.group.Status.LockWait
	if w == nil || s.group.Status.CurrentRun != nil || s.granted() {
		return time.Time{}
	}
	var next time.Time
	for _, key := range w.Locks {
		if l := s.locks[key]; l != nil {
			if rise := s.capacityRise(l); !rise.IsZero() && (next.IsZero() || rise.Before(next)) {
				next = rise
			}
		}
	}
	return next
}

// capacityRise is the first instant after now and within the forecast at which the lock's
// capacity in force rises, past the cuts before it; zero when none comes.
func (s *simulation) capacityRise(l v1alpha1.Lock) time.Time {
	c := locks.CapacityAt(l, s.now)
	for !c.NextAt.IsZero() && !c.NextAt.After(s.forecast.Until) {
		if c.Next > c.InForce {
			return c.NextAt
		}
		c = locks.CapacityAt(l, c.NextAt)
	}
	return time.Time{}
}

// expectedEnd is when the run in progress ends: its start plus its item's run time.
func (s *simulation) expectedEnd() time.Time {
	run := s.forecast.Runs[s.running]
	d, ok := s.runEnds[run.Item]
	if !ok {
		d = s.assumed.unrecorded // an item without status kept no run
	}
	return run.Start.Add(d).Truncate(time.Second)
}

// advance moves the clock to next and ends the run in progress when its time has come: its pod
// succeeds, its container ending then.
func (s *simulation) advance(next time.Time) {
	s.now = next
	cr := s.group.Status.CurrentRun
	if cr == nil || s.running < 0 {
		return
	}
	end := s.expectedEnd()
	if end.After(s.now) {
		return
	}
	pod := s.pod(cr.PodName)
	if pod == nil {
		return
	}
	finished := metav1.NewTime(later(end, pod.CreationTimestamp.Time))
	pod.Status.Phase = corev1.PodSucceeded
	if pod.Status.StartTime == nil {
		started := metav1.NewTime(s.forecast.Runs[s.running].Start)
		pod.Status.StartTime = &started
	}
	name := "main"
	if len(pod.Spec.Containers) > 0 {
		name = pod.Spec.Containers[0].Name
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: name, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: finished},
	}}}
}

// pod is the simulated pod of that name, nil when there is none.
func (s *simulation) pod(name string) *corev1.Pod {
	for i := range s.pods {
		if s.pods[i].Name == name {
			return &s.pods[i]
		}
	}
	return nil
}

// end ends the run going now with result.
func (s *simulation) end(result v1alpha1.RunResult) {
	run := &s.forecast.Runs[s.running]
	run.End, run.Result = s.now, result
	if result == v1alpha1.ResultSucceeded && !run.Verify {
		delete(s.awaited, run.Item)
	}
	s.running = -1
}

// assessed reports whether every item due at the start has a predicted success and the round
// going at the start has ended, or merged into the next.
func (s *simulation) assessed() bool {
	rounds := s.forecast.Rounds
	return len(s.awaited) == 0 && (len(rounds) == 0 || !rounds[0].EndsAt.IsZero() || rounds[0].Overrun)
}

// heldAtStart reports whether an item with that wait reason at the start has no success due:
// done in its round, parked or removed.
func heldAtStart(waitReason v1alpha1.WaitReason) bool {
	switch waitReason {
	case v1alpha1.WaitDone, v1alpha1.WaitNextTick, v1alpha1.WaitParked, v1alpha1.WaitRemoved:
		return true
	case v1alpha1.WaitRunning, v1alpha1.WaitSucceededRecently, v1alpha1.WaitCoolingOff, v1alpha1.WaitBlackout,
		v1alpha1.WaitOverrun, v1alpha1.WaitSuspended, v1alpha1.WaitLockHeld, v1alpha1.WaitBreakerOpen:
		return false
	}
	return false // no wait reason: the item is not held
}

// NextSuccess is the end of the item's first predicted successful run, and false when the
// forecast predicts none.
func (f *Forecast) NextSuccess(item string) (time.Time, bool) {
	for _, r := range f.Runs {
		if r.Item == item && r.Result == v1alpha1.ResultSucceeded {
			return r.End, true
		}
	}
	return time.Time{}, false
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
