package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// breakerLock is the OaatLock nas of capacity 2 that carries the breaker, its breaker as given.
func breakerLock(cb *v1alpha1.LockCircuitBreakerStatus, holders ...v1alpha1.LockHolder) *v1alpha1.OaatLock {
	l := builders.Lock("nas", 2, holders...)
	l.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	l.Status.CircuitBreaker = cb
	return l
}

// lockOpenedBy is the breaker of nas, opened by group ns/other at opened, with the next probe
// at next after failedProbes failed probes.
func lockOpenedBy(opened, next time.Duration, failedProbes int32) *v1alpha1.LockCircuitBreakerStatus {
	return &v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedBy: "ns/other", OpenedAt: at(opened),
		NextProbeAt: at(next), FailedProbes: failedProbes, LastFailureReason: "Error", LastFailureExitCode: code(75)}
}

// following is the group's breaker as it follows lockOpenedBy(opened, next, failedProbes).
func following(opened, next time.Duration, failedProbes int32) *v1alpha1.CircuitBreakerStatus {
	return &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedAt: at(opened), NextProbeAt: at(next),
		FailedProbes: failedProbes, LastFailureReason: "Error", LastFailureExitCode: code(75)}
}

// lockBreakerView is what a pass decides about the breaker a lock carries, compared as a whole.
type lockBreakerView struct {
	// Group is what the group decides of its own breaker.
	Group breakerView
	// Lock are the lock breakers written, each "key" with its new state, and the event's
	// "Type Reason" on the lock.
	Lock []lockBreakerWrite
	// Acquired are the locks whose slot the started run takes.
	Acquired []string
	// TargetMessage is the TargetAvailable condition's message.
	TargetMessage string
}

type lockBreakerWrite struct {
	Key     string
	Breaker *v1alpha1.LockCircuitBreakerStatus
	Event   string
}

func lockBreakerViewOf(p Plan) lockBreakerView {
	v := lockBreakerView{Group: viewOf(p), Acquired: acquired(p)}
	for _, u := range p.LockBreakers {
		w := lockBreakerWrite{Key: u.Lock.LockKey(), Breaker: u.Breaker}
		if u.Event != nil {
			w.Event = u.Event.Type + " " + string(u.Event.Reason)
		}
		v.Lock = append(v.Lock, w)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionTargetAvailable); c != nil {
		v.TargetMessage = c.Message
	}
	return v
}

// The breaker a lock carries, one pass of a group naming it at a time, with a fixed clock and a
// seeded source: what the group's breaker becomes, what is written to the lock (and its event),
// what starts and which slot it takes.
func TestLockBreakerDecisions(t *testing.T) {
	const closed, open = v1alpha1.BreakerClosed, v1alpha1.BreakerOpen
	fresh := map[string]string{"a": "0 - BreakerOpen@50s", "b": "0 - BreakerOpen@50s", "c": "0 - BreakerOpen@50s", "d": "0 - BreakerOpen@50s"}
	for _, tc := range []struct {
		name  string
		setup func(g *v1alpha1.OaatGroup)
		lock  *v1alpha1.OaatLock
		run   *endedRun
		now   time.Duration
		want  lockBreakerView
	}{
		{
			name: "the group's breaker opens and opens the lock's, with one event on the lock",
			setup: func(g *v1alpha1.OaatGroup) {
				aAndBFailed(g, 75)
				itemStatus(g, "d")
			},
			lock: breakerLock(nil),
			run:  &endedRun{item: "c", run: 3, start: 0, end: 30 * time.Second, exitCode: 75},
			now:  31 * time.Second,
			want: lockBreakerView{
				Group: breakerView{
					Breaker: &v1alpha1.CircuitBreakerStatus{State: open, FailedItems: []string{"a", "b", "c"}, OpenedAt: at(31 * time.Second),
						LastFailureReason: "Error", LastFailureExitCode: code(75), NextProbeAt: at(90 * time.Second)},
					Items: map[string]string{"a": "1 -2m0s BreakerOpen@1m30s", "b": "1 -1m0s BreakerOpen@1m30s",
						"c": "1 30s BreakerOpen@1m30s", "d": "0 - BreakerOpen@1m30s"},
					Events: []string{"Warning RunFailed", "Warning BreakerOpened"}, Requeue: 59 * time.Second, Target: "False BreakerOpen",
				},
				Lock: []lockBreakerWrite{{Key: "nas", Event: "Warning BreakerOpened", Breaker: &v1alpha1.LockCircuitBreakerStatus{
					State: open, OpenedBy: "ns/backups", OpenedAt: at(31 * time.Second), NextProbeAt: at(90 * time.Second),
					LastFailureReason: "Error", LastFailureExitCode: code(75)}}},
				// The lock says it carries the breaker once the write is read back.
				TargetMessage: `The circuit breaker is open: 3 items failed in a row ("a", "b", "c"), the last failure with Error, exit code 75; failed probes: 0; the next probe starts at 2026-11-21T12:01:30Z`,
			},
		},
		{
			name: "a group that has not failed follows the lock's open breaker: it holds, on the lock's probe schedule, and sends no event",
			lock: breakerLock(lockOpenedBy(-10*time.Second, 50*time.Second, 0)),
			want: lockBreakerView{
				Group:         breakerView{Breaker: following(-10*time.Second, 50*time.Second, 0), Items: fresh, Requeue: 50 * time.Second, Target: "False BreakerOpen"},
				TargetMessage: `The circuit breaker is open (carried by OaatLock nas for every group naming it, opened by group ns/other): the last failure with Error, exit code 75; failed probes: 0; the next probe starts at 2026-11-21T12:00:50Z`,
			},
		},
		{
			name:  "a group without spec.circuitBreaker follows it too, with the breaker's defaults",
			setup: func(g *v1alpha1.OaatGroup) { g.Spec.CircuitBreaker = nil },
			lock:  breakerLock(lockOpenedBy(-10*time.Second, 50*time.Second, 0)),
			want: lockBreakerView{
				Group:         breakerView{Breaker: following(-10*time.Second, 50*time.Second, 0), Items: fresh, Requeue: 50 * time.Second, Target: "False BreakerOpen"},
				TargetMessage: `The circuit breaker is open (carried by OaatLock nas for every group naming it, opened by group ns/other): the last failure with Error, exit code 75; failed probes: 0; the next probe starts at 2026-11-21T12:00:50Z`,
			},
		},
		{
			name:  "once nextProbeAt has passed, the probe takes a slot of the lock",
			setup: func(g *v1alpha1.OaatGroup) { g.Status.CircuitBreaker = following(-time.Minute, -time.Second, 0) },
			lock:  breakerLock(lockOpenedBy(-time.Minute, -time.Second, 0)),
			want: lockBreakerView{
				Group: breakerView{Breaker: following(-time.Minute, -time.Second, 0),
					Items:   map[string]string{"a": "0 - Running@-", "b": "0 - BreakerOpen@-", "c": "0 - BreakerOpen@-", "d": "0 - BreakerOpen@-"},
					Started: "a", Target: "False BreakerOpen"},
				Acquired:      []string{"nas"},
				TargetMessage: `The circuit breaker is open (carried by OaatLock nas for every group naming it, opened by group ns/other): the last failure with Error, exit code 75; failed probes: 0; item "a" runs as a probe`,
			},
		},
		{
			name:  "while another group's probe holds the lock no probe starts, though its capacity is 2",
			setup: func(g *v1alpha1.OaatGroup) { g.Status.CircuitBreaker = following(-time.Minute, -time.Second, 0) },
			lock:  breakerLock(lockOpenedBy(-time.Minute, -time.Second, 0), otherHolder("other")),
			want: lockBreakerView{
				Group: breakerView{Breaker: following(-time.Minute, -time.Second, 0),
					Items:   map[string]string{"a": "0 - LockHeld@-", "b": "0 - LockHeld@-", "c": "0 - LockHeld@-", "d": "0 - LockHeld@-"},
					Requeue: time.Minute, Target: "False BreakerOpen"},
				TargetMessage: `The circuit breaker is open (carried by OaatLock nas for every group naming it, opened by group ns/other): the last failure with Error, exit code 75; failed probes: 0; the next probe starts once an item is eligible`,
			},
		},
		{
			name: "a failed probe pushes the lock's next probe for every group; no failure count grows",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.CircuitBreaker = following(-2*time.Minute, -time.Minute, 0)
				itemStatus(g, "b")
				itemStatus(g, "c")
				itemStatus(g, "d")
			},
			lock: breakerLock(lockOpenedBy(-2*time.Minute, -time.Minute, 0)),
			run:  &endedRun{item: "a", run: 1, start: -time.Minute, end: -30 * time.Second, exitCode: 75},
			want: lockBreakerView{
				Group: breakerView{Breaker: following(-2*time.Minute, 90*time.Second, 1),
					Items:  map[string]string{"a": "0 - BreakerOpen@1m30s", "b": "0 - BreakerOpen@1m30s", "c": "0 - BreakerOpen@1m30s", "d": "0 - BreakerOpen@1m30s"},
					Events: []string{"Warning RunFailed"}, Probes: []v1alpha1.RunResult{v1alpha1.ResultFailed}, Requeue: 90 * time.Second, Target: "False BreakerOpen"},
				Lock:          []lockBreakerWrite{{Key: "nas", Breaker: lockOpenedBy(-2*time.Minute, 90*time.Second, 1)}},
				TargetMessage: `The circuit breaker is open (carried by OaatLock nas for every group naming it, opened by group ns/other): the last failure with Error, exit code 75; failed probes: 1; the next probe starts at 2026-11-21T12:01:30Z`,
			},
		},
		{
			name: "a successful probe closes the lock's breaker for every group, and the group goes on at once",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.CircuitBreaker = following(-2*time.Minute, -time.Minute, 0)
				itemStatus(g, "b")
				itemStatus(g, "c")
				itemStatus(g, "d")
			},
			lock: breakerLock(lockOpenedBy(-2*time.Minute, -time.Minute, 0)),
			run:  &endedRun{item: "a", run: 1, start: -time.Minute, end: -30 * time.Second, exitCode: 0},
			want: lockBreakerView{
				Group: breakerView{Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(0)},
					Items:   map[string]string{"a": "0 - SucceededRecently@59m30s", "b": "0 - @-", "c": "0 - @-", "d": "0 - Running@-"},
					Started: "d", Events: []string{"Normal RunSucceeded", "Normal BreakerClosed"}, Probes: []v1alpha1.RunResult{v1alpha1.ResultSucceeded}, Target: "True BreakerClosed"},
				Lock: []lockBreakerWrite{{Key: "nas", Event: "Normal BreakerClosed",
					Breaker: &v1alpha1.LockCircuitBreakerStatus{State: closed, ClosedAt: at(0), ClosedBy: "ns/backups"}}},
				Acquired:      []string{"nas"},
				TargetMessage: "The circuit breaker is closed: 0 of the 3 distinct items in a row whose failures open it have failed",
			},
		},
		{
			name: "the lock closed by another group's probe: the group closes, quietly, and its items run at once, their cool-offs waived",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, false)
				g.Status.CircuitBreaker = following(-3*time.Minute, time.Minute, 1)
			},
			lock: breakerLock(&v1alpha1.LockCircuitBreakerStatus{State: closed, ClosedAt: at(-5 * time.Second), ClosedBy: "ns/other"}),
			want: lockBreakerView{
				Group: breakerView{Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(0)},
					Items:   streakItems("@-", "@-", "@-", "Running@-"),
					Started: "d", Target: "True BreakerClosed"},
				Acquired:      []string{"nas"},
				TargetMessage: "The circuit breaker is closed: 0 of the 3 distinct items in a row whose failures open it have failed",
			},
		},
		{
			name:  "open in both, the lock's later probe time and higher count win",
			setup: func(g *v1alpha1.OaatGroup) { g.Status.CircuitBreaker = following(-3*time.Minute, time.Minute, 1) },
			lock:  breakerLock(lockOpenedBy(-3*time.Minute, 3*time.Minute, 2)),
			want: lockBreakerView{
				Group: breakerView{Breaker: following(-3*time.Minute, 3*time.Minute, 2),
					Items:   map[string]string{"a": "0 - BreakerOpen@3m0s", "b": "0 - BreakerOpen@3m0s", "c": "0 - BreakerOpen@3m0s", "d": "0 - BreakerOpen@3m0s"},
					Requeue: 3 * time.Minute, Target: "False BreakerOpen"},
				TargetMessage: `The circuit breaker is open (carried by OaatLock nas for every group naming it, opened by group ns/other): the last failure with Error, exit code 75; failed probes: 2; the next probe starts at 2026-11-21T12:03:00Z`,
			},
		},
		{
			name: "a lock that no longer carries the breaker is not followed",
			lock: func() *v1alpha1.OaatLock {
				l := breakerLock(lockOpenedBy(-10*time.Second, 50*time.Second, 0))
				l.Spec.CircuitBreaker = v1alpha1.LockBreakerNone
				return l
			}(),
			want: lockBreakerView{
				Group: breakerView{Breaker: &v1alpha1.CircuitBreakerStatus{State: closed},
					Items:   map[string]string{"a": "0 - Running@-", "b": "0 - @-", "c": "0 - @-", "d": "0 - @-"},
					Started: "a", Target: "True BreakerClosed"},
				Acquired:      []string{"nas"},
				TargetMessage: "The circuit breaker is closed: 0 of the 3 distinct items in a row whose failures open it have failed",
			},
		},
		{
			name: "a group without spec.circuitBreaker whose lock no longer carries one loses its breaker, which closes",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker = nil
				g.Status.CircuitBreaker = following(-time.Minute, time.Minute, 0)
			},
			lock: func() *v1alpha1.OaatLock {
				l := breakerLock(lockOpenedBy(-time.Minute, time.Minute, 0))
				l.Spec.CircuitBreaker = v1alpha1.LockBreakerNone
				return l
			}(),
			want: lockBreakerView{
				Group: breakerView{
					Items:   map[string]string{"a": "0 - Running@-", "b": "0 - @-", "c": "0 - @-", "d": "0 - @-"},
					Started: "a", Events: []string{"Normal BreakerClosed"}},
				Acquired: []string{"nas"},
			},
		},
		{
			name: "a reset of any group naming the lock closes the lock's breaker for all",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.CircuitBreaker = following(-time.Minute, time.Minute, 0)
				g.Annotations = map[string]string{v1alpha1.AnnotationReset: "again"}
			},
			lock: breakerLock(lockOpenedBy(-time.Minute, time.Minute, 0)),
			want: lockBreakerView{
				Group: breakerView{Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(0)},
					Items:   map[string]string{"a": "0 - Running@-", "b": "0 - @-", "c": "0 - @-", "d": "0 - @-"},
					Started: "a", Events: []string{"Normal GroupReset", "Normal BreakerClosed"}, Target: "True BreakerClosed"},
				Lock: []lockBreakerWrite{{Key: "nas", Event: "Normal BreakerClosed",
					Breaker: &v1alpha1.LockCircuitBreakerStatus{State: closed, ClosedAt: at(0), ClosedBy: "ns/backups"}}},
				Acquired:      []string{"nas"},
				TargetMessage: "The circuit breaker is closed: 0 of the 3 distinct items in a row whose failures open it have failed",
			},
		},
		{
			name: "a lock's open breaker without times (its status written by hand) is closed by the group's success, without a panic",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(-time.Second)}
			},
			lock: breakerLock(&v1alpha1.LockCircuitBreakerStatus{State: open}),
			want: lockBreakerView{
				Group: breakerView{Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(-time.Second)},
					Items:   map[string]string{"a": "0 - Running@-", "b": "0 - @-", "c": "0 - @-", "d": "0 - @-"},
					Started: "a", Target: "True BreakerClosed"},
				Lock: []lockBreakerWrite{{Key: "nas", Event: "Normal BreakerClosed",
					Breaker: &v1alpha1.LockCircuitBreakerStatus{State: closed, ClosedAt: at(-time.Second), ClosedBy: "ns/backups"}}},
				Acquired:      []string{"nas"},
				TargetMessage: "The circuit breaker is closed: 0 of the 3 distinct items in a row whose failures open it have failed",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := breakerGroup()
			g.Spec.Locks = []string{"nas"}
			if tc.setup != nil {
				tc.setup(g)
			}
			var pods []corev1.Pod
			if r := tc.run; r != nil {
				pods = ends(t, g, r.item, r.run, r.start, r.end, r.exitCode)
			}
			got := lockBreakerViewOf(Decide(lockedInput(g, tc.now, []*v1alpha1.OaatLock{tc.lock}, nil, pods...)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
