package planner

import (
	"strings"
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

// lockBreakerView is what a pass decides about following the breaker a lock carries, compared as
// a whole. A plan writes no lock: the lock's review leads its breaker (locks.Decide).
type lockBreakerView struct {
	// Group is what the group decides of its own breaker.
	Group breakerView
	// Requested are the locks the group's request waits for, "item: keys"; empty when it asks none.
	Requested string
	// TargetMessage is the TargetAvailable condition's message.
	TargetMessage string
}

func lockBreakerViewOf(p Plan) lockBreakerView {
	v := lockBreakerView{Group: viewOf(p)}
	if w := p.Status.LockWait; w != nil {
		v.Requested = w.Item + ": " + strings.Join(w.Locks, ", ")
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionTargetAvailable); c != nil {
		v.TargetMessage = c.Message
	}
	return v
}

// lockBreakerCase is a pass of group backups naming the lock nas at t0, with a seeded source.
type lockBreakerCase struct {
	name  string
	setup func(g *v1alpha1.OaatGroup)
	lock  *v1alpha1.OaatLock
	run   *endedRun
	want  lockBreakerView
}

func (tc lockBreakerCase) check(t *testing.T) {
	t.Helper()
	g := breakerGroup()
	g.Spec.Locks = []string{"nas"}
	if tc.setup != nil {
		tc.setup(g)
	}
	var pods []corev1.Pod
	if r := tc.run; r != nil {
		pods = ends(t, g, r.item, r.run, r.start, r.end, r.exitCode)
	}
	got := lockBreakerViewOf(Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{tc.lock}, nil, pods...)))
	if diff := cmp.Diff(tc.want, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

// The group follows the breaker its lock carries, in the three rows of lockbreaker.go's table: what
// the group's breaker becomes, and what it asks of the lock.
func TestLockBreakerDecisions(t *testing.T) {
	const closed = v1alpha1.BreakerClosed
	fresh := map[string]string{"a": "0 - BreakerOpen@50s", "b": "0 - BreakerOpen@50s", "c": "0 - BreakerOpen@50s", "d": "0 - BreakerOpen@50s"}
	for _, tc := range []lockBreakerCase{
		{
			name: "group Closed, lock Open, group closed before it opened: the group opens too and holds, on the lock's probe schedule, and sends no event",
			lock: breakerLock(lockOpenedBy(-10*time.Second, 50*time.Second, 0)),
			want: lockBreakerView{
				Group:         breakerView{Breaker: following(-10*time.Second, 50*time.Second, 0), Items: fresh, Requeue: 50 * time.Second, Target: "False BreakerOpen"},
				TargetMessage: `The circuit breaker is open (carried by OaatLock nas for every group naming it, opened by group ns/other): the last failure with Error, exit code 75; failed probes: 0; the next probe starts at 2026-11-21T12:00:50Z`,
			},
		},
		{
			name:  "the same row for a group without spec.circuitBreaker: it follows with the breaker's defaults",
			setup: func(g *v1alpha1.OaatGroup) { g.Spec.CircuitBreaker = nil },
			lock:  breakerLock(lockOpenedBy(-10*time.Second, 50*time.Second, 0)),
			want: lockBreakerView{
				Group:         breakerView{Breaker: following(-10*time.Second, 50*time.Second, 0), Items: fresh, Requeue: 50 * time.Second, Target: "False BreakerOpen"},
				TargetMessage: `The circuit breaker is open (carried by OaatLock nas for every group naming it, opened by group ns/other): the last failure with Error, exit code 75; failed probes: 0; the next probe starts at 2026-11-21T12:00:50Z`,
			},
		},
		{
			name: "group Open, lock closed since the group opened (another group's probe succeeded): the group closes, quietly, and asks the lock for an item at once, the cool-offs waived",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, false)
				g.Status.CircuitBreaker = following(-3*time.Minute, time.Minute, 1)
			},
			lock: breakerLock(&v1alpha1.LockCircuitBreakerStatus{State: closed, ClosedAt: at(-5 * time.Second), ClosedBy: "ns/other"}),
			want: lockBreakerView{
				Group: breakerView{Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(0)},
					Items:   streakItems("LockHeld@-", "LockHeld@-", "LockHeld@-", "LockHeld@-"),
					Requeue: lockRecheck, Target: "True BreakerClosed"},
				Requested:     "d: nas",
				TargetMessage: "The circuit breaker is closed: 0 of the 3 distinct items in a row whose failures open it have failed",
			},
		},
		{
			name:  "group Open, lock Open: the group takes the lock's later probe time and higher count",
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
			name: "the same row after the group's own failed probe: its later probe time stays (the lock takes it at its review), and no failure count grows",
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
				TargetMessage: `The circuit breaker is open (carried by OaatLock nas for every group naming it, opened by group ns/other): the last failure with Error, exit code 75; failed probes: 1; the next probe starts at 2026-11-21T12:01:30Z`,
			},
		},
	} {
		t.Run(tc.name, tc.check)
	}
}

// What the group does not follow: a lock that no longer carries the breaker, and a lock's open
// breaker that the group closed after it opened (the group's reset, or a lock's breaker whose
// times were lost, its status written by hand). The group then asks the lock for its next run as
// any group.
func TestLockBreakerNotFollowed(t *testing.T) {
	const closed = v1alpha1.BreakerClosed
	asks := map[string]string{"a": "0 - LockHeld@-", "b": "0 - LockHeld@-", "c": "0 - LockHeld@-", "d": "0 - LockHeld@-"}
	closedMessage := "The circuit breaker is closed: 0 of the 3 distinct items in a row whose failures open it have failed"
	notCarried := func(lb *v1alpha1.LockCircuitBreakerStatus) *v1alpha1.OaatLock {
		l := breakerLock(lb)
		l.Spec.CircuitBreaker = v1alpha1.LockBreakerNone
		return l
	}
	for _, tc := range []lockBreakerCase{
		{
			name: "a lock that no longer carries the breaker",
			lock: notCarried(lockOpenedBy(-10*time.Second, 50*time.Second, 0)),
			want: lockBreakerView{
				Group:     breakerView{Breaker: &v1alpha1.CircuitBreakerStatus{State: closed}, Items: asks, Requeue: lockRecheck, Target: "True BreakerClosed"},
				Requested: "a: nas", TargetMessage: closedMessage,
			},
		},
		{
			name: "a group without spec.circuitBreaker whose lock no longer carries one loses its breaker, which closes",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker = nil
				g.Status.CircuitBreaker = following(-time.Minute, time.Minute, 0)
			},
			lock: notCarried(lockOpenedBy(-time.Minute, time.Minute, 0)),
			want: lockBreakerView{
				Group:     breakerView{Items: asks, Events: []string{"Normal BreakerClosed"}, Requeue: lockRecheck},
				Requested: "a: nas",
			},
		},
		{
			name: "the group's reset closes its breaker; the lock's, still open, is not followed back (the lock closes at its review)",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.CircuitBreaker = following(-time.Minute, time.Minute, 0)
				g.Annotations = map[string]string{v1alpha1.AnnotationReset: "again"}
			},
			lock: breakerLock(lockOpenedBy(-time.Minute, time.Minute, 0)),
			want: lockBreakerView{
				Group: breakerView{Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(0)}, Items: asks,
					Events: []string{"Normal GroupReset", "Normal BreakerClosed"}, Requeue: lockRecheck, Target: "True BreakerClosed"},
				Requested: "a: nas", TargetMessage: closedMessage,
			},
		},
		{
			name: "a lock's open breaker without times (its status written by hand) is not followed by a closed group, without a panic",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(-time.Second)}
			},
			lock: breakerLock(&v1alpha1.LockCircuitBreakerStatus{State: v1alpha1.BreakerOpen}),
			want: lockBreakerView{
				Group: breakerView{Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(-time.Second)}, Items: asks,
					Requeue: lockRecheck, Target: "True BreakerClosed"},
				Requested: "a: nas", TargetMessage: closedMessage,
			},
		},
	} {
		t.Run(tc.name, tc.check)
	}
}
