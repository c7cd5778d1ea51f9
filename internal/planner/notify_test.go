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

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// notifyView is what recordTransitions decides: the outbox's transitions (event and item, by
// sequence), its next sequence, what it dropped, and condition Notified.
type notifyView struct {
	Pending  []string
	Next     int64
	Dropped  int64
	Notified string // "Status/Reason", empty without the condition
	// SaysDropped is whether condition Notified says transitions were dropped.
	SaysDropped bool
	Outbox      bool
	Events      []v1alpha1.Reason
}

func notifyViewOf(p Plan) notifyView {
	var v notifyView
	if out := p.Status.Notifications; out != nil {
		v.Outbox, v.Next, v.Dropped = true, out.Next, out.Dropped
		for _, t := range out.Pending {
			v.Pending = append(v.Pending, fmt.Sprintf("%d %s %s", t.Seq, t.Event, t.Item))
		}
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionNotified); c != nil {
		v.Notified = string(c.Status) + "/" + c.Reason
		v.SaysDropped = strings.Contains(c.Message, "dropped unsent")
	}
	for _, e := range p.Events {
		if e.Reason == v1alpha1.ReasonSinkUnreachable {
			v.Events = append(v.Events, e.Reason)
		}
	}
	return v
}

// outboxOf is an outbox whose transitions have the sequences from first to next-1, each a
// RunFailed of item a.
func outboxOf(first, next int64) *v1alpha1.NotificationsStatus {
	out := &v1alpha1.NotificationsStatus{Next: next}
	for seq := first; seq < next; seq++ {
		out.Pending = append(out.Pending, v1alpha1.Transition{Seq: seq, Event: v1alpha1.NotifyRunFailed, Item: "a", Time: *at(-time.Hour)})
	}
	return out
}

// TestRecordTransitions runs one pass of Decide in a group of items a and b (uid "u1") and says
// what goes into its outbox: the run of item a ends in that pass unless the case says otherwise.
func TestRecordTransitions(t *testing.T) {
	failed := func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod {
		t.Helper()
		running(t, g, "a", 1, at(0))
		return []corev1.Pod{finished(runPod(t, g, "a", 1, corev1.PodFailed), 1, "Error", at(time.Minute))}
	}
	succeeded := func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod {
		t.Helper()
		running(t, g, "a", 1, at(0))
		return []corev1.Pod{finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(time.Minute))}
	}
	cluster := Notify{ClusterSink: true}
	late := cond(v1alpha1.ConditionAtRisk, metav1.ConditionTrue, v1alpha1.ReasonItemLate, "item a late", 0)
	for _, tc := range []struct {
		name   string
		notify Notify
		setup  func(g *v1alpha1.OaatGroup)
		pods   func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod
		atRisk *metav1.Condition // the forecaster's condition
		want   notifyView
	}{
		{name: "no sink: no outbox, no condition", pods: failed},
		{name: "a group's sink not allowed: nothing recorded, condition Notified says why",
			notify: Notify{GroupSinkPrefixes: []string{"https://hooks.example/"}},
			setup:  func(g *v1alpha1.OaatGroup) { g.Spec.Notify = &v1alpha1.Notify{Sink: "http://10.0.0.1/"} },
			pods:   failed,
			want:   notifyView{Notified: "False/SinkNotAllowed"}},
		{name: "a group's sink allowed: the failed run recorded",
			notify: Notify{GroupSinkPrefixes: []string{"https://hooks.example/"}},
			setup:  func(g *v1alpha1.OaatGroup) { g.Spec.Notify = &v1alpha1.Notify{Sink: "https://hooks.example/team-a"} },
			pods:   failed,
			want:   notifyView{Outbox: true, Pending: []string{"0 RunFailed a"}, Next: 1, Notified: "True/SinksReached"}},
		{name: "the cluster's sink: the failed run recorded", notify: cluster, pods: failed,
			want: notifyView{Outbox: true, Pending: []string{"0 RunFailed a"}, Next: 1, Notified: "True/SinksReached"}},
		{name: "a success is not a transition (no outbox until the first)", notify: cluster, pods: succeeded,
			want: notifyView{Notified: "True/SinksReached"}},
		{name: "after earlier transitions: the next sequence", notify: cluster, pods: failed,
			setup: func(g *v1alpha1.OaatGroup) { g.Status.Notifications = outboxOf(4, 6) },
			want:  notifyView{Outbox: true, Pending: []string{"4 RunFailed a", "5 RunFailed a", "6 RunFailed a"}, Next: 7, Notified: "True/SinksReached"}},
		{name: "acknowledged ones removed",
			notify: Notify{ClusterSink: true, Delivery: &Delivery{UID: "u1", Acked: 5}}, pods: failed,
			setup: func(g *v1alpha1.OaatGroup) { g.Status.Notifications = outboxOf(4, 6) },
			want:  notifyView{Outbox: true, Pending: []string{"6 RunFailed a"}, Next: 7, Notified: "True/SinksReached"}},
		{name: "a report on an earlier group of the name is not taken",
			notify: Notify{ClusterSink: true, Delivery: &Delivery{UID: "u0", Acked: 5}}, pods: failed,
			setup: func(g *v1alpha1.OaatGroup) { g.Status.Notifications = outboxOf(4, 6) },
			want:  notifyView{Outbox: true, Pending: []string{"4 RunFailed a", "5 RunFailed a", "6 RunFailed a"}, Next: 7, Notified: "True/SinksReached"}},
		{name: "a failed delivery: condition False and an event, the transitions kept",
			notify: Notify{ClusterSink: true, Delivery: &Delivery{UID: "u1", Acked: 3, Failure: "connection refused"}}, pods: failed,
			setup: func(g *v1alpha1.OaatGroup) { g.Status.Notifications = outboxOf(4, 6) },
			want: notifyView{Outbox: true, Pending: []string{"4 RunFailed a", "5 RunFailed a", "6 RunFailed a"}, Next: 7,
				Notified: "False/SinkUnreachable", Events: []v1alpha1.Reason{v1alpha1.ReasonSinkUnreachable}}},
		{name: "a delivery still failing: no second event",
			notify: Notify{ClusterSink: true, Delivery: &Delivery{UID: "u1", Acked: 3, Failure: "connection refused"}}, pods: succeeded,
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.Notifications = outboxOf(4, 6)
				g.Status.Conditions = append(g.Status.Conditions, cond(v1alpha1.ConditionNotified, metav1.ConditionFalse, v1alpha1.ReasonSinkUnreachable, "x", -time.Minute))
			},
			want: notifyView{Outbox: true, Pending: []string{"4 RunFailed a", "5 RunFailed a"}, Next: 6, Notified: "False/SinkUnreachable"}},
		{name: "beyond the bound: the oldest dropped and counted", notify: cluster, pods: failed,
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.Notifications = outboxOf(10, 10+v1alpha1.MaxPendingNotifications)
			},
			want: notifyView{Outbox: true, Pending: seqs(11, 11+v1alpha1.MaxPendingNotifications), Next: 11 + v1alpha1.MaxPendingNotifications,
				Dropped: 1, Notified: "True/SinksReached", SaysDropped: true}},
		{name: "the failure that parks: two transitions", notify: cluster, pods: failed,
			setup: func(g *v1alpha1.OaatGroup) { g.Spec.MaxConsecutiveFailures = 1 },
			want:  notifyView{Outbox: true, Pending: []string{"0 RunFailed a", "1 ItemParked a"}, Next: 2, Notified: "True/SinksReached"}},
		{name: "the failure that opens the breaker", notify: cluster, pods: failed,
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 2, ProbeInterval: "1m", MaxProbeInterval: "4m"}
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed, FailedItems: []string{"b"}}
			},
			want: notifyView{Outbox: true, Pending: []string{"0 RunFailed a", "1 BreakerOpened "}, Next: 2, Notified: "True/SinksReached"}},
		{name: "the probe that closes the breaker", notify: cluster, pods: succeeded,
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 2, ProbeInterval: "1m", MaxProbeInterval: "4m"}
				g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedAt: at(-time.Hour)}
			},
			want: notifyView{Outbox: true, Pending: []string{"0 BreakerClosed "}, Next: 1, Notified: "True/SinksReached"}},
		{name: "AtRisk turning True", notify: cluster, pods: succeeded, atRisk: &late,
			setup: func(g *v1alpha1.OaatGroup) {
				g.Status.Conditions = append(g.Status.Conditions, cond(v1alpha1.ConditionAtRisk, metav1.ConditionFalse, v1alpha1.ReasonOnTime, "on time", -time.Hour))
			},
			want: notifyView{Outbox: true, Pending: []string{"0 AtRisk "}, Next: 1, Notified: "True/SinksReached"}},
		{name: "the sinks gone: the outbox emptied, its sequence kept", pods: failed,
			setup: func(g *v1alpha1.OaatGroup) { g.Status.Notifications = outboxOf(4, 6) },
			want:  notifyView{Outbox: true, Next: 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup("a", "b")
			g.UID = "u1"
			itemStatus(g, "b").LastSuccess = at(0)
			if tc.setup != nil {
				tc.setup(g)
			}
			in := input(g, time.Minute, tc.pods(t, g)...)
			in.Notify = tc.notify
			in.AtRisk = tc.atRisk
			if diff := cmp.Diff(tc.want, notifyViewOf(Decide(in))); diff != "" {
				t.Errorf("notifications (-want +got):\n%s", diff)
			}
		})
	}
}

func seqs(first, next int64) []string {
	var out []string
	for seq := first; seq < next; seq++ {
		out = append(out, fmt.Sprintf("%d %s a", seq, v1alpha1.NotifyRunFailed))
	}
	return out
}

// TestTransitionReasonBounded: a container's reason, which the operator does not choose, is cut
// to what status.notifications takes, so that the status write is not refused.
func TestTransitionReasonBounded(t *testing.T) {
	g := newGroup("a")
	g.UID = "u1"
	running(t, g, "a", 1, at(0))
	long := strings.Repeat("Reason", 20)
	pod := finished(runPod(t, g, "a", 1, corev1.PodFailed), 1, long, at(time.Minute))
	in := input(g, time.Minute, pod)
	in.Notify = Notify{ClusterSink: true}
	out := Decide(in).Status.Notifications
	if out == nil || len(out.Pending) != 1 {
		t.Fatalf("outbox %+v, want one transition", out)
	}
	if r := out.Pending[0].Reason; len(r) > v1alpha1.MaxNotificationReason || !strings.HasPrefix(r, "Reason") {
		t.Errorf("reason %q (%d bytes), want the container's cut to %d", r, len(r), v1alpha1.MaxNotificationReason)
	}
}
