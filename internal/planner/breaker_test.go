package planner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// breakerGroup is a group of four items with a breaker that opens after 3 distinct failed items
// and probes after 1m, 2m, then every 4m; the items cool off 10m after a failure.
func breakerGroup() *v1alpha1.OaatGroup {
	g := newGroup("a", "b", "c", "d")
	g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 3, ProbeInterval: "1m", MaxProbeInterval: "4m"}
	return g
}

// breakerView is the part of a plan the breaker decides, compared as a whole.
type breakerView struct {
	Breaker *v1alpha1.CircuitBreakerStatus
	// Items are each item's "failureCount lastFailure waitReason@nextEligibleAt", times as offsets from t0.
	Items   map[string]string
	Started string
	Events  []string // "Type Reason"
	Probes  []v1alpha1.RunResult
	Requeue time.Duration
	// Target is the TargetAvailable condition's "status reason", empty when absent.
	Target string
}

func offset(t *metav1.Time) string {
	if t == nil {
		return "-"
	}
	return t.Sub(t0).String()
}

func viewOf(p Plan) breakerView {
	v := breakerView{Breaker: p.Status.CircuitBreaker, Items: map[string]string{}, Probes: p.Probes, Requeue: p.RequeueAfter}
	for _, it := range p.Status.Items {
		v.Items[it.Name] = fmt.Sprintf("%d %s %s@%s", it.FailureCount, offset(it.LastFailure), it.WaitReason, offset(it.NextEligibleAt))
	}
	if p.Create != nil {
		v.Started = p.Status.CurrentRun.Item
	}
	for _, e := range p.Events {
		v.Events = append(v.Events, e.Type+" "+string(e.Reason))
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionTargetAvailable); c != nil {
		v.Target = string(c.Status) + " " + c.Reason
	}
	return v
}

func failedAt(g *v1alpha1.OaatGroup, item string, when time.Duration, count int32) {
	it := itemStatus(g, item)
	it.LastFailure, it.FailureCount, it.LastStarted = at(when), count, at(when-30*time.Second)
}

func code(c int32) *int32 { return &c }

// openStatus is the status of a breaker that items a, b and c opened at t0 (c's failure), with
// failedProbes probes failed since and the next probe at next.
func openStatus(failedProbes int32, next time.Duration) *v1alpha1.CircuitBreakerStatus {
	return &v1alpha1.CircuitBreakerStatus{
		State: v1alpha1.BreakerOpen, FailedItems: []string{"a", "b", "c"}, OpenedAt: at(0),
		LastFailureReason: "Error", LastFailureExitCode: code(1), NextProbeAt: at(next), FailedProbes: failedProbes,
	}
}

// endedRun is a run of item, numbered run, from start to end (after t0), with the exit code, the
// stop reason the status recorded, and the OaatRun it served.
type endedRun struct {
	item       string
	run        int64
	start, end time.Duration
	exitCode   int32
	stopReason v1alpha1.StopReason
	oaatRun    string
}

// ends makes the status say that run `run` of item started at start, and returns its pod, ended
// at end with the exit code (Completed for 0, else Error).
func ends(t *testing.T, g *v1alpha1.OaatGroup, item string, run int64, start, end time.Duration, exitCode int32) []corev1.Pod {
	t.Helper()
	running(t, g, item, run, at(start))
	phase, reason := corev1.PodFailed, "Error"
	if exitCode == 0 {
		phase, reason = corev1.PodSucceeded, "Completed"
	}
	return []corev1.Pod{finished(runPod(t, g, item, run, phase), exitCode, reason, at(end))}
}

// aAndBFailed makes a and b the items that failed in a row (2m and 1m before t0) with the exit
// code, 0 for a breaker that has not recorded it, and the breaker closed.
func aAndBFailed(g *v1alpha1.OaatGroup, exitCode int32) {
	failedAt(g, "a", -2*time.Minute, 1)
	failedAt(g, "b", -time.Minute, 1)
	g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed, FailedItems: []string{"a", "b"}}
	if exitCode != 0 {
		g.Status.CircuitBreaker.LastFailureReason, g.Status.CircuitBreaker.LastFailureExitCode = "Error", code(exitCode)
	}
}

// streakItems is the view of the items after streak: a, b and c failed once (2m, 1m and 0s
// before t0), d never; each with its "waitReason@nextEligibleAt".
func streakItems(a, b, c, d string) map[string]string {
	return map[string]string{"a": "1 -2m0s " + a, "b": "1 -1m0s " + b, "c": "1 0s " + c, "d": "0 - " + d}
}

// streak makes a, b and c the items that failed in a row before t0 (c at t0), and opens the
// breaker with their failures when open is set.
func streak(g *v1alpha1.OaatGroup, open bool) {
	failedAt(g, "a", -2*time.Minute, 1)
	failedAt(g, "b", -time.Minute, 1)
	failedAt(g, "c", 0, 1)
	itemStatus(g, "d")
	g.Status.RunCount = 3
	if open {
		g.Status.CircuitBreaker = openStatus(0, time.Minute)
	}
}

// Each transition of the breaker, from one pass with a fixed clock and a seeded source: the run
// recorded, what the breaker becomes, the items' failures and waits, what starts (in the usual
// order: never succeeded first, then never failed; the seeded source breaks a tie of b, c and d
// with d), the events and the wake-up.
func TestBreakerDecisions(t *testing.T) {
	const closed, open = v1alpha1.BreakerClosed, v1alpha1.BreakerOpen
	for _, tc := range []struct {
		name string
		// setup makes the group's spec and status, before run.
		setup func(g *v1alpha1.OaatGroup)
		// run is the group's current run and how its pod ended, nil for none.
		run *endedRun
		now time.Duration
		// onDemand is the item of an OaatRun of the group, created at t0, pending or (when it is
		// the current run's) in progress.
		onDemand string
		want     breakerView
	}{
		{
			name: "a group with a breaker starts closed, with its condition",
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed},
				Items:   map[string]string{"a": "0 - Running@-", "b": "0 - @-", "c": "0 - @-", "d": "0 - @-"},
				Started: "a", Target: "True BreakerClosed",
			},
		},
		{
			name: "a counted failure adds its item and is recorded for the item as usual",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: closed}
			},
			run: &endedRun{item: "a", run: 1, start: 0, end: 30 * time.Second, exitCode: 1},
			now: 31 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, FailedItems: []string{"a"}, LastFailureReason: "Error", LastFailureExitCode: code(1)},
				Items:   map[string]string{"a": "1 30s CoolingOff@10m30s", "b": "0 - @-", "c": "0 - @-", "d": "0 - Running@-"},
				Started: "d", Events: []string{"Warning RunFailed"}, Target: "True BreakerClosed",
			},
		},
		{
			name: "an item that fails again counts once",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: closed, FailedItems: []string{"a"}, LastFailureReason: "Error", LastFailureExitCode: code(1)}
				failedAt(g, "a", -20*time.Minute, 1)
				itemStatus(g, "b").LastSuccess = at(0)
				itemStatus(g, "c").LastSuccess = at(0)
				itemStatus(g, "d").LastSuccess = at(0)
			},
			run: &endedRun{item: "a", run: 2, start: 0, end: 30 * time.Second, exitCode: 2},
			now: 31 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, FailedItems: []string{"a"}, LastFailureReason: "Error", LastFailureExitCode: code(2)},
				Items: map[string]string{"a": "2 30s CoolingOff@10m30s", "b": "0 - SucceededRecently@1h0m0s",
					"c": "0 - SucceededRecently@1h0m0s", "d": "0 - SucceededRecently@1h0m0s"},
				Events: []string{"Warning RunFailed"}, Requeue: 10*time.Minute - time.Second, Target: "True BreakerClosed",
			},
		},
		{
			name: "the K-th distinct failed item opens it: no run until the first probe",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, false)
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: closed, FailedItems: []string{"a", "b"}}
				itemStatus(g, "c").FailureCount, itemStatus(g, "c").LastFailure = 0, nil
			},
			run: &endedRun{item: "c", run: 4, start: 0, end: 30 * time.Second, exitCode: 1},
			now: 31 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: open, FailedItems: []string{"a", "b", "c"}, OpenedAt: at(31 * time.Second),
					LastFailureReason: "Error", LastFailureExitCode: code(1), NextProbeAt: at(90 * time.Second)},
				Items: map[string]string{"a": "1 -2m0s BreakerOpen@1m30s", "b": "1 -1m0s BreakerOpen@1m30s",
					"c": "1 30s BreakerOpen@1m30s", "d": "0 - BreakerOpen@1m30s"},
				Events: []string{"Warning RunFailed", "Warning BreakerOpened"}, Requeue: 59 * time.Second, Target: "False BreakerOpen",
			},
		},
		{
			name: "a success starts the count again",
			setup: func(g *v1alpha1.OaatGroup) {
				aAndBFailed(g, 1)
			},
			run: &endedRun{item: "c", run: 3, start: 0, end: 30 * time.Second, exitCode: 0},
			now: 31 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, LastFailureReason: "Error", LastFailureExitCode: code(1)},
				Items: map[string]string{"a": "1 -2m0s CoolingOff@8m0s", "b": "1 -1m0s CoolingOff@9m0s",
					"c": "0 - SucceededRecently@1h0m30s", "d": "0 - Running@-"},
				Started: "d", Events: []string{"Normal RunSucceeded"}, Target: "True BreakerClosed",
			},
		},
		{
			name: "with exitCodes, a failure with another code is the item's own and starts the count again",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker.ExitCodes = []int32{75}
				aAndBFailed(g, 75)
			},
			run: &endedRun{item: "c", run: 3, start: 0, end: 30 * time.Second, exitCode: 1},
			now: 31 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, LastFailureReason: "Error", LastFailureExitCode: code(75)},
				Items: map[string]string{"a": "1 -2m0s CoolingOff@8m0s", "b": "1 -1m0s CoolingOff@9m0s",
					"c": "1 30s CoolingOff@10m30s", "d": "0 - Running@-"},
				Started: "d", Events: []string{"Warning RunFailed"}, Target: "True BreakerClosed",
			},
		},
		{
			name: "with exitCodes, a failure with a listed code counts and opens it",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker.ExitCodes = []int32{75}
				aAndBFailed(g, 0)
			},
			run: &endedRun{item: "c", run: 3, start: 0, end: 30 * time.Second, exitCode: 75},
			now: 31 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: open, FailedItems: []string{"a", "b", "c"}, OpenedAt: at(31 * time.Second),
					LastFailureReason: "Error", LastFailureExitCode: code(75), NextProbeAt: at(90 * time.Second)},
				Items: map[string]string{"a": "1 -2m0s BreakerOpen@1m30s", "b": "1 -1m0s BreakerOpen@1m30s",
					"c": "1 30s BreakerOpen@1m30s", "d": "0 - BreakerOpen@1m30s"},
				Events: []string{"Warning RunFailed", "Warning BreakerOpened"}, Requeue: 59 * time.Second, Target: "False BreakerOpen",
			},
		},
		{
			name: "a failure with a do-not-retry exit code is the item's own: it parks the item and starts the count again",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.ExitCodes = &v1alpha1.ExitCodes{DoNotRetry: []int32{4}}
				aAndBFailed(g, 1)
			},
			run: &endedRun{item: "c", run: 3, start: 0, end: 30 * time.Second, exitCode: 4},
			now: 31 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, LastFailureReason: "Error", LastFailureExitCode: code(1)},
				Items: map[string]string{"a": "1 -2m0s CoolingOff@8m0s", "b": "1 -1m0s CoolingOff@9m0s",
					"c": "1 30s Parked@-", "d": "0 - Running@-"},
				Started: "d", Events: []string{"Warning RunFailed", "Warning ItemParked", "Normal ItemsParked"}, Target: "True BreakerClosed",
			},
		},
		{
			name: "with reasons, a run stopped by runTimeout counts by its reason",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker.Reasons = []string{string(v1alpha1.ReasonDeadlineExceeded)}
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: closed}
			},
			run: &endedRun{item: "a", run: 1, start: 0, end: 30 * time.Second, exitCode: 137, stopReason: v1alpha1.StopDeadlineExceeded},
			now: 31 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, FailedItems: []string{"a"}, LastFailureReason: string(v1alpha1.ReasonDeadlineExceeded), LastFailureExitCode: code(137)},
				Items:   map[string]string{"a": "1 30s CoolingOff@10m30s", "b": "0 - @-", "c": "0 - @-", "d": "0 - Running@-"},
				Started: "d", Events: []string{"Warning RunFailed"}, Target: "True BreakerClosed",
			},
		},
		{
			name: "an interrupted run changes nothing",
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: closed, FailedItems: []string{"a"}, LastFailureReason: "Error", LastFailureExitCode: code(1)}
				failedAt(g, "a", -2*time.Minute, 1)
			},
			run: &endedRun{item: "b", run: 2, start: 0, end: 30 * time.Second, exitCode: 137, stopReason: v1alpha1.StopInterrupted},
			now: 31 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, FailedItems: []string{"a"}, LastFailureReason: "Error", LastFailureExitCode: code(1)},
				Items:   map[string]string{"a": "1 -2m0s CoolingOff@8m0s", "b": "0 - @-", "c": "0 - @-", "d": "0 - Running@-"},
				Started: "d", Events: []string{"Normal RunInterrupted"}, Target: "True BreakerClosed",
			},
		},
		{
			name: "open: before nextProbeAt nothing starts, every item waits for it",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
			},
			now: 30 * time.Second,
			want: breakerView{
				Breaker: openStatus(0, time.Minute),
				Items:   streakItems("BreakerOpen@1m0s", "BreakerOpen@1m0s", "BreakerOpen@1m0s", "BreakerOpen@1m0s"),
				Requeue: 30 * time.Second, Target: "False BreakerOpen",
			},
		},
		{
			name: "open: at nextProbeAt one probe starts, the item never probed that succeeded longest ago, its cool-off or not",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
				itemStatus(g, "d").LastSuccess = at(-2 * time.Hour)
				itemStatus(g, "c").LastSuccess = at(-5 * time.Hour)
				itemStatus(g, "a").LastSuccess, itemStatus(g, "b").LastSuccess = at(-3*time.Hour), at(-4*time.Hour)
			},
			now: time.Minute,
			want: breakerView{
				Breaker: openStatus(0, time.Minute),
				Items:   streakItems("BreakerOpen@-", "BreakerOpen@-", "Running@-", "BreakerOpen@-"),
				Started: "c", Target: "False BreakerOpen",
			},
		},
		{
			name: "open: the probes go round the items, those probed since the breaker opened last",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
				g.Status.CircuitBreaker = openStatus(2, 5*time.Minute)
				for _, item := range []string{"a", "b", "c"} {
					itemStatus(g, item).LastStarted = at(time.Minute) // probed (c twice: the last at +1m)
				}
				itemStatus(g, "d").LastSuccess = at(-2 * time.Hour) // succeeded most recently, never probed
			},
			now: 5 * time.Minute,
			want: breakerView{
				Breaker: openStatus(2, 5*time.Minute),
				Items:   streakItems("BreakerOpen@-", "BreakerOpen@-", "BreakerOpen@-", "Running@-"),
				Started: "d", Target: "False BreakerOpen",
			},
		},
		{
			name: "open: a failed probe grows no failure count, and the next waits twice as long",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
			},
			run: &endedRun{item: "d", run: 4, start: time.Minute, end: 90 * time.Second, exitCode: 2},
			now: 91 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: open, FailedItems: []string{"a", "b", "c"}, OpenedAt: at(0),
					LastFailureReason: "Error", LastFailureExitCode: code(2), NextProbeAt: at(210 * time.Second), FailedProbes: 1},
				Items:  streakItems("BreakerOpen@3m30s", "BreakerOpen@3m30s", "BreakerOpen@3m30s", "BreakerOpen@3m30s"),
				Events: []string{"Warning RunFailed"}, Probes: []v1alpha1.RunResult{v1alpha1.ResultFailed}, Requeue: 119 * time.Second, Target: "False BreakerOpen",
			},
		},
		{
			name: "open: the wait after failed probes stops at maxProbeInterval",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
				g.Status.CircuitBreaker = openStatus(3, 10*time.Minute)
			},
			run: &endedRun{item: "d", run: 4, start: 10 * time.Minute, end: 11 * time.Minute, exitCode: 1},
			now: 11 * time.Minute,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: open, FailedItems: []string{"a", "b", "c"}, OpenedAt: at(0),
					LastFailureReason: "Error", LastFailureExitCode: code(1), NextProbeAt: at(15 * time.Minute), FailedProbes: 4},
				Items:  streakItems("BreakerOpen@15m0s", "BreakerOpen@15m0s", "BreakerOpen@15m0s", "BreakerOpen@15m0s"),
				Events: []string{"Warning RunFailed"}, Probes: []v1alpha1.RunResult{v1alpha1.ResultFailed}, Requeue: 4 * time.Minute, Target: "False BreakerOpen",
			},
		},
		{
			name: "open: a successful probe closes it and the next item starts at once, inside the cool-off of its failure",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
				g.Status.CircuitBreaker = openStatus(1, 3*time.Minute)
			},
			run: &endedRun{item: "d", run: 4, start: 3 * time.Minute, end: 4 * time.Minute, exitCode: 0},
			now: 4 * time.Minute,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(4 * time.Minute)},
				Items:   streakItems("Running@-", "@-", "@-", "SucceededRecently@1h4m0s"),
				Started: "a", Events: []string{"Normal RunSucceeded", "Normal BreakerClosed"}, Probes: []v1alpha1.RunResult{v1alpha1.ResultSucceeded},
				Target: "True BreakerClosed",
			},
		},
		{
			name: "closed: a failure after the close cools off as usual",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, false)
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(4 * time.Minute)}
			},
			run: &endedRun{item: "a", run: 5, start: 4 * time.Minute, end: 5 * time.Minute, exitCode: 1},
			now: 5 * time.Minute,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(4 * time.Minute), FailedItems: []string{"a"},
					LastFailureReason: "Error", LastFailureExitCode: code(1)},
				Items: map[string]string{"a": "2 5m0s CoolingOff@15m0s", "b": "1 -1m0s @-",
					"c": "1 0s @-", "d": "0 - Running@-"},
				Started: "d", Events: []string{"Warning RunFailed"}, Target: "True BreakerClosed",
			},
		},
		{
			name: "open: an on-demand run starts before nextProbeAt, as a probe",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
			},
			now:      30 * time.Second,
			onDemand: "b",
			want: breakerView{
				Breaker: openStatus(0, time.Minute),
				Items:   streakItems("BreakerOpen@1m0s", "Running@-", "BreakerOpen@1m0s", "BreakerOpen@1m0s"),
				Started: "b", Target: "False BreakerOpen",
			},
		},
		{
			name: "open: a failed on-demand probe grows no failure count",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
			},
			run:      &endedRun{item: "b", run: 4, start: 30 * time.Second, end: 40 * time.Second, exitCode: 1, oaatRun: "now-b"},
			now:      40 * time.Second,
			onDemand: "b",
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: open, FailedItems: []string{"a", "b", "c"}, OpenedAt: at(0),
					LastFailureReason: "Error", LastFailureExitCode: code(1), NextProbeAt: at(160 * time.Second), FailedProbes: 1},
				Items:  streakItems("BreakerOpen@2m40s", "BreakerOpen@2m40s", "BreakerOpen@2m40s", "BreakerOpen@2m40s"),
				Events: []string{"Warning RunFailed"}, Probes: []v1alpha1.RunResult{v1alpha1.ResultFailed}, Requeue: 2 * time.Minute, Target: "False BreakerOpen",
			},
		},
		{
			name: "open: suspended, no probe starts and the breaker stays open",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
				g.Spec.Suspend = true
			},
			now: 5 * time.Minute,
			want: breakerView{
				Breaker: openStatus(0, time.Minute),
				Items:   streakItems("Suspended@-", "Suspended@-", "Suspended@-", "Suspended@-"),
				Events:  []string{"Normal SpecSuspend"}, Target: "False BreakerOpen",
			},
		},
		{
			name: "open: a new value of oaat.io/reset closes it",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
				g.Annotations = map[string]string{v1alpha1.AnnotationReset: "again"}
			},
			now: 30 * time.Second,
			want: breakerView{
				Breaker: &v1alpha1.CircuitBreakerStatus{State: closed, ClosedAt: at(30 * time.Second)},
				Items:   streakItems("@-", "@-", "@-", "Running@-"),
				Started: "d", Events: []string{"Normal GroupReset", "Normal BreakerClosed"}, Target: "True BreakerClosed",
			},
		},
		{
			name: "open: removing spec.circuitBreaker closes it, its status and condition go, cool-offs apply again",
			setup: func(g *v1alpha1.OaatGroup) {
				streak(g, true)
				g.Spec.CircuitBreaker = nil
				g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionTargetAvailable, Status: metav1.ConditionFalse,
					Reason: string(v1alpha1.ReasonBreakerOpen), LastTransitionTime: *at(0)}}
			},
			now: 30 * time.Second,
			want: breakerView{
				Items:   streakItems("CoolingOff@8m0s", "CoolingOff@9m0s", "CoolingOff@10m0s", "Running@-"),
				Started: "d", Events: []string{"Normal BreakerClosed"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := breakerGroup()
			if tc.setup != nil {
				tc.setup(g)
			}
			var pods []corev1.Pod
			if r := tc.run; r != nil {
				pods = ends(t, g, r.item, r.run, r.start, r.end, r.exitCode)
				g.Status.CurrentRun.StopReason, g.Status.CurrentRun.OaatRun = r.stopReason, r.oaatRun
			}
			in := input(g, tc.now, pods...)
			if tc.onDemand != "" {
				r := newOnDemandRun("now-"+tc.onDemand, g.Name, tc.onDemand, 0)
				if cr := g.Status.CurrentRun; cr != nil && cr.OaatRun == r.Name {
					r.Status = v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunInProgress, PodName: cr.PodName, StartedAt: &cr.StartedAt}
				}
				in.OnDemandRuns = []v1alpha1.OaatRun{r}
			}
			got := viewOf(Decide(in))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBreakerProbeWait(t *testing.T) {
	b := &breakerPolicy{probeInterval: time.Minute, maxProbeInterval: 5 * time.Minute}
	var got []time.Duration
	for failed := range int32(6) {
		got = append(got, b.probeWait(failed))
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits after 0..5 failed probes (-want +got):\n%s", diff)
	}
}

func TestReadBreakerPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    v1alpha1.CircuitBreaker
		want    breakerPolicy
		wantErr string
	}{
		{
			name: "defaults",
			spec: v1alpha1.CircuitBreaker{},
			want: breakerPolicy{threshold: 3, probeInterval: time.Minute, maxProbeInterval: time.Hour},
		},
		{
			name: "everything set",
			spec: v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 5, ExitCodes: []int32{75}, Reasons: []string{"DeadlineExceeded"},
				ProbeInterval: "30s", MaxProbeInterval: "1 hour 30 min"},
			want: breakerPolicy{threshold: 5, exitCodes: []int32{75}, reasons: []string{"DeadlineExceeded"},
				probeInterval: 30 * time.Second, maxProbeInterval: 90 * time.Minute},
		},
		{
			name:    "an interval that does not parse is named, the rest is read",
			spec:    v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 2, ProbeInterval: "soon"},
			want:    breakerPolicy{threshold: 2, maxProbeInterval: time.Hour},
			wantErr: "spec.circuitBreaker.probeInterval",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readBreakerPolicy(&tc.spec)
			if diff := cmp.Diff(tc.want, *got, cmp.AllowUnexported(breakerPolicy{})); diff != "" {
				t.Errorf("policy (-want +got):\n%s", diff)
			}
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want one naming %q", err, tc.wantErr)
			}
		})
	}
}

// An interval that does not parse makes the group not Ready, naming the field; the breaker keeps
// its state.
func TestBreakerInvalidSpec(t *testing.T) {
	g := breakerGroup()
	streak(g, true)
	g.Spec.CircuitBreaker.MaxProbeInterval = "1 fortnight"
	p := Decide(input(g, 5*time.Minute))
	ready := condition(t, p, v1alpha1.ConditionReady)
	if ready.Reason != string(v1alpha1.ReasonInvalidSpec) || !strings.Contains(ready.Message, "spec.circuitBreaker.maxProbeInterval") {
		t.Errorf("Ready = %+v, want InvalidSpec naming spec.circuitBreaker.maxProbeInterval", ready)
	}
	if diff := cmp.Diff(openStatus(0, time.Minute), p.Status.CircuitBreaker); diff != "" {
		t.Errorf("breaker (-want +got):\n%s", diff)
	}
	if p.Create != nil {
		t.Errorf("a run started with an invalid spec: %s", p.Create.Name)
	}
}

// The events and the condition say what a user needs: which items failed, with what, when the
// next probe runs, and why the breaker closed.
func TestBreakerMessages(t *testing.T) {
	g := breakerGroup()
	streak(g, false)
	itemStatus(g, "c").FailureCount, itemStatus(g, "c").LastFailure = 0, nil
	g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed, FailedItems: []string{"a", "b"}}
	running(t, g, "c", 4, at(0))
	pod := finished(runPod(t, g, "c", 4, corev1.PodFailed), 75, "Error", at(30*time.Second))
	p := Decide(input(g, 31*time.Second, pod))

	wantEvents := []Event{
		{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed, Message: `Item "c" failed in pod ` + pod.Name + `: Error, exit code 75`},
		{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonBreakerOpened, Message: `3 items failed in a row ("a", "b", "c"), the last with Error, exit code 75: ` +
			`the circuit breaker opens; no item's failure count grows, one item at a time runs as a probe, the first at 2026-11-21T12:01:30Z`},
	}
	if diff := cmp.Diff(wantEvents, p.Events); diff != "" {
		t.Errorf("events on opening (-want +got):\n%s", diff)
	}
	wantCondition := metav1.Condition{Type: v1alpha1.ConditionTargetAvailable, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonBreakerOpen),
		LastTransitionTime: *at(31 * time.Second), ObservedGeneration: 1,
		Message: `The circuit breaker is open: 3 items failed in a row ("a", "b", "c"), the last failure with Error, exit code 75; ` +
			`failed probes: 0; the next probe starts at 2026-11-21T12:01:30Z`}
	if diff := cmp.Diff(wantCondition, condition(t, p, v1alpha1.ConditionTargetAvailable)); diff != "" {
		t.Errorf("condition on opening (-want +got):\n%s", diff)
	}

	// The first probe, d, fails: its event says it was a probe; no breaker event.
	g = applied(g, p)
	p = Decide(input(g, 90*time.Second))
	g = applied(g, p)
	probe := finished(runPod(t, g, "d", 5, corev1.PodFailed), 75, "Error", at(100*time.Second))
	p = Decide(input(g, 100*time.Second, probe))
	wantEvents = []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonRunFailed, Message: `Item "d" failed in pod ` + probe.Name +
		`: Error, exit code 75, a failed probe of the open circuit breaker: the item's failure count and cool-off do not grow`}}
	if diff := cmp.Diff(wantEvents, p.Events); diff != "" {
		t.Errorf("events of a failed probe (-want +got):\n%s", diff)
	}

	// The second probe succeeds: one event says the breaker closed; the condition is True.
	g = applied(g, p)
	p = Decide(input(g, 220*time.Second))
	g = applied(g, p)
	cr := g.Status.CurrentRun
	success := finished(runPod(t, g, cr.Item, g.Status.RunCount, corev1.PodSucceeded), 0, "Completed", at(230*time.Second))
	p = Decide(input(g, 230*time.Second, probe, success))
	wantEvents = []Event{
		{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonRunSucceeded, Message: fmt.Sprintf("Item %q succeeded in pod %s: Completed, exit code 0", cr.Item, cr.PodName)},
		{Type: corev1.EventTypeNormal, Reason: v1alpha1.ReasonBreakerClosed, Message: `The circuit breaker, open since 2026-11-21T12:00:31Z, closes (failed probes: 1): ` +
			fmt.Sprintf("item %q succeeded as a probe; items run in their usual order", cr.Item)},
	}
	if diff := cmp.Diff(wantEvents, p.Events); diff != "" {
		t.Errorf("events on closing (-want +got):\n%s", diff)
	}
	wantCondition = metav1.Condition{Type: v1alpha1.ConditionTargetAvailable, Status: metav1.ConditionTrue, Reason: string(v1alpha1.ReasonBreakerClosed),
		LastTransitionTime: *at(230 * time.Second), ObservedGeneration: 1,
		Message: "The circuit breaker is closed: 0 of the 3 distinct items in a row whose failures open it have failed"}
	if diff := cmp.Diff(wantCondition, condition(t, p, v1alpha1.ConditionTargetAvailable)); diff != "" {
		t.Errorf("condition on closing (-want +got):\n%s", diff)
	}
}

// A dead target from start to end, pass after pass, each pass deciding from the status the last
// one wrote: three items fail and open the breaker; the probes run one at a time, 1m, 2m, 4m and
// 4m after the failure before them, each on an item not probed yet (no item's failure count
// grows); the target comes back, the probe succeeds, and every other item starts at once, one
// after the other. A pass that decides again from a written status changes nothing.
func TestBreakerDeadTarget(t *testing.T) {
	g := breakerGroup()
	g.Spec.OaatItems = append(g.Spec.OaatItems, "e")
	now := time.Duration(0)
	type start struct {
		At   time.Duration
		Item string
	}
	var starts []start
	var probes []v1alpha1.RunResult
	var breakerEvents []string
	var pods []corev1.Pod
	for pass := 0; pass < 40 && len(starts) < 11; pass++ {
		p := Decide(input(g, now, pods...))
		probes = append(probes, p.Probes...)
		for _, e := range p.Events {
			if e.Reason == v1alpha1.ReasonBreakerOpened || e.Reason == v1alpha1.ReasonBreakerClosed {
				breakerEvents = append(breakerEvents, fmt.Sprintf("%v %s", now, e.Reason))
			}
		}
		g = applied(g, p)
		seen := pods
		if p.Create != nil {
			live := *p.Create
			live.UID, live.Status.Phase = types.UID("uid-"+live.Name), corev1.PodRunning
			seen = []corev1.Pod{live}
		}
		if again := Decide(input(g, now, seen...)); len(again.Events) > 0 || again.Create != nil ||
			!cmp.Equal(again.Status, g.Status) {
			t.Fatalf("at %v: deciding again from the written status changes it: events %v, create %v, %s",
				now, reasons(again), again.Create != nil, cmp.Diff(g.Status, again.Status))
		}
		if p.Create == nil {
			if p.RequeueAfter == 0 {
				t.Fatalf("at %v: idle and no wake-up", now)
			}
			now += p.RequeueAfter
			continue
		}
		starts = append(starts, start{now, p.Status.CurrentRun.Item})
		// Each run takes 10s; the target comes back at +9m.
		now += 10 * time.Second
		pod := seen[0]
		if targetUp := now >= 9*time.Minute; targetUp {
			pod = finished(pod, 0, "Completed", at(now))
			pod.Status.Phase = corev1.PodSucceeded
		} else {
			pod = finished(pod, 1, "Error", at(now))
			pod.Status.Phase = corev1.PodFailed
		}
		pods = []corev1.Pod{pod}
	}
	want := []start{
		{0, "e"}, {10 * time.Second, "a"}, {20 * time.Second, "d"}, // three distinct failures open it at +30s
		{90 * time.Second, "b"},  // probe 1: 1m after the failure at +30s
		{220 * time.Second, "c"}, // probe 2: 2m after its failure at +1m40s
		{470 * time.Second, "e"}, // probe 3: 4m after +3m50s; every item was probed or opened it, e failed longest ago
		{720 * time.Second, "a"}, // probe 4: 4m (maxProbeInterval) after +7m50s; the target is back, it succeeds
		// At once, one after the other, in the usual order: never failed as the items' status
		// says (b and c failed only as probes), then the oldest failure.
		{730 * time.Second, "b"}, {740 * time.Second, "c"}, {750 * time.Second, "e"}, {760 * time.Second, "d"},
	}
	if diff := cmp.Diff(want, starts); diff != "" {
		t.Errorf("starts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]v1alpha1.RunResult{v1alpha1.ResultFailed, v1alpha1.ResultFailed, v1alpha1.ResultFailed, v1alpha1.ResultSucceeded}, probes); diff != "" {
		t.Errorf("probes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"30s BreakerOpened", "12m10s BreakerClosed"}, breakerEvents); diff != "" {
		t.Errorf("breaker events (-want +got):\n%s", diff)
	}
	for _, it := range g.Status.Items {
		if it.FailureCount > 1 {
			t.Errorf("item %s: failureCount %d, want at most the one failure before the breaker opened", it.Name, it.FailureCount)
		}
	}
}

// An on-demand run settled from its item's history (its final status was not written when the
// group recorded its run) reads a failed probe as a failure, though the item's failure count is
// unchanged.
func TestRecordedResultOfAProbe(t *testing.T) {
	for _, tc := range []struct {
		name string
		item v1alpha1.ItemStatus
		want v1alpha1.RunResult
	}{
		{"a success", v1alpha1.ItemStatus{LastStarted: at(0), LastSuccess: at(time.Minute)}, v1alpha1.ResultSucceeded},
		{"a success recorded in the second of its start", v1alpha1.ItemStatus{LastStarted: at(0), LastSuccess: at(0)}, v1alpha1.ResultSucceeded},
		{"a failed probe after a success", v1alpha1.ItemStatus{LastSuccess: at(-time.Hour), LastStarted: at(0), LastReason: "Error"}, v1alpha1.ResultFailed},
		{"a failure", v1alpha1.ItemStatus{LastSuccess: at(-time.Hour), LastStarted: at(0), LastFailure: at(time.Minute), FailureCount: 1}, v1alpha1.ResultFailed},
		{"an interruption", v1alpha1.ItemStatus{LastStarted: at(0), LastReason: string(v1alpha1.ReasonInterrupted)}, v1alpha1.ResultInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := recordedResult(&tc.item); got != tc.want {
				t.Errorf("recordedResult = %s, want %s", got, tc.want)
			}
		})
	}
}
