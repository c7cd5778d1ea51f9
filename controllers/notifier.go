package controllers

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/notify"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// notifier sends the groups' transitions (status.notifications.pending) as CloudEvents, off the
// reconcile path. A pass hands it the group's outbox as persisted; one goroutine sends each
// group's transitions in order to each of its sinks, and keeps, per group and sink, the last
// transition acknowledged. It reports to the group's next pass the last transition every sink
// acknowledged (planner.Input.Notify.Delivery), which the pass removes from the outbox: the
// status keeps one writer. What it keeps is derived: a new leader sends again what the outbox
// still holds (at least once). A sink that fails is retried after a backoff of its own (1 s,
// doubling to 5 min), so that a sink down does not hold back the others' groups for long.
type notifier struct {
	mu    sync.Mutex
	clock clock.PassiveClock
	// send delivers one transition of a group to a sink.
	send notify.Sender
	// cluster is the cluster-wide sink, nil without one.
	cluster *notify.Sink
	// metrics counts each delivery's result.
	metrics *metrics.NotifyMetrics
	// outboxes are the groups' outboxes to send, by group.
	outboxes map[types.NamespacedName]*outbox
	// sinks are the sinks' backoffs, by URL.
	sinks map[string]*sinkState
	// work has a value when an outbox changed.
	work chan struct{}
	queueHandover
}

// outbox is a group's outbox as the notifier sends it.
type outbox struct {
	group    notify.Group
	pending  []v1alpha1.Transition
	next     int64
	targets  []target
	reported planner.Delivery
}

// target is a sink of a group and the last transition it acknowledged (or that it does not take).
type target struct {
	sink  notify.Sink
	acked int64
}

// sinkState is a sink's backoff after a failure.
type sinkState struct {
	retryAt time.Time
	backoff time.Duration
	failure string
}

const (
	firstSinkBackoff = time.Second
	maxSinkBackoff   = 5 * time.Minute
)

func newNotifier(clk clock.PassiveClock, opts NotifyOptions) *notifier {
	return &notifier{
		clock: clk, send: opts.Send, cluster: opts.Sink, metrics: opts.Metrics,
		outboxes:      map[types.NamespacedName]*outbox{},
		sinks:         map[string]*sinkState{},
		work:          make(chan struct{}, 1),
		queueHandover: newQueueHandover(),
	}
}

// delivery is the notifier's report on the group, nil when it has none.
func (n *notifier) delivery(key types.NamespacedName) *planner.Delivery {
	n.mu.Lock()
	defer n.mu.Unlock()
	if o, ok := n.outboxes[key]; ok && o.reported.UID != "" {
		d := o.reported
		return &d
	}
	return nil
}

// consider takes the group's outbox st as persisted, and the sinks its spec names; groupSink is
// spec.notify when the manager allows it, else nil.
func (n *notifier) consider(group *v1alpha1.OaatGroup, st *v1alpha1.NotificationsStatus, groupSink *v1alpha1.Notify) {
	key := types.NamespacedName{Namespace: group.Namespace, Name: group.Name}
	n.mu.Lock()
	defer n.mu.Unlock()
	o := n.outboxes[key]
	if o != nil && o.group.UID != string(group.UID) {
		o = nil
	}
	if st == nil || (n.cluster == nil && groupSink == nil) {
		delete(n.outboxes, key)
		return
	}
	if o != nil && st.Next < o.next {
		return // an older status than one already taken
	}
	if o == nil {
		o = &outbox{group: notify.Group{UID: string(group.UID), Namespace: group.Namespace, Name: group.Name}}
		n.outboxes[key] = o
	}
	o.pending, o.next = append(o.pending[:0], st.Pending...), st.Next
	o.targets = n.targets(o.targets, groupSink)
	n.signal()
}

// targets are the group's sinks, keeping what each acknowledged.
func (n *notifier) targets(had []target, groupSink *v1alpha1.Notify) []target {
	var sinks []notify.Sink
	if n.cluster != nil {
		sinks = append(sinks, *n.cluster)
	}
	if groupSink != nil {
		sinks = append(sinks, notify.GroupSink(groupSink))
	}
	out := make([]target, 0, len(sinks))
	for _, s := range sinks {
		t := target{sink: s, acked: -1}
		for _, h := range had {
			if h.sink.URL == s.URL && h.sink.Scope == s.Scope {
				t.acked = h.acked
			}
		}
		out = append(out, t)
	}
	return out
}

func (n *notifier) signal() {
	select {
	case n.work <- struct{}{}:
	default:
	}
}

// forget drops what the notifier holds of a deleted group.
func (n *notifier) forget(key types.NamespacedName) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.outboxes, key)
}

// Start sends while this process leads.
func (n *notifier) Start(ctx context.Context) error {
	if !n.await(ctx) {
		return nil
	}
	for {
		wait := n.round(ctx)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-n.work:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// round sends what each group's sinks have not acknowledged, the sinks in backoff left out, and
// says how long until the first backoff ends (an hour when none is going).
func (n *notifier) round(ctx context.Context) time.Duration {
	wait := time.Hour
	for _, key := range n.keys() {
		for _, job := range n.jobs(key) {
			if ctx.Err() != nil {
				return wait
			}
			err := n.send(ctx, job.sink, job.group, job.transition)
			n.settle(key, job, err)
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.forgetUnusedSinks()
	now := n.clock.Now()
	for _, s := range n.sinks {
		if s.retryAt.After(now) {
			wait = min(wait, s.retryAt.Sub(now))
		}
	}
	return wait
}

// forgetUnusedSinks drops the backoff of a sink no group sends to any more (its groups deleted,
// or their spec.notify changed), so that what the notifier keeps is bounded by the groups.
func (n *notifier) forgetUnusedSinks() {
	used := map[string]bool{}
	for _, o := range n.outboxes {
		for _, t := range o.targets {
			used[t.sink.URL] = true
		}
	}
	for url := range n.sinks {
		if !used[url] {
			delete(n.sinks, url)
		}
	}
}

func (n *notifier) keys() []types.NamespacedName {
	n.mu.Lock()
	defer n.mu.Unlock()
	keys := make([]types.NamespacedName, 0, len(n.outboxes))
	for key := range n.outboxes {
		keys = append(keys, key)
	}
	return keys
}

// job is one transition to send to one sink.
type job struct {
	group      notify.Group
	sink       notify.Sink
	transition v1alpha1.Transition
}

// jobs are the group's next transition for each sink not in backoff; a transition a sink does not
// take counts as acknowledged by it.
func (n *notifier) jobs(key types.NamespacedName) []job {
	n.mu.Lock()
	defer n.mu.Unlock()
	o, ok := n.outboxes[key]
	if !ok {
		return nil
	}
	now := n.clock.Now()
	var out []job
	for i := range o.targets {
		t := &o.targets[i]
		if s := n.sinks[t.sink.URL]; s != nil && s.retryAt.After(now) {
			continue
		}
		for _, tr := range o.pending {
			if tr.Seq <= t.acked {
				continue
			}
			if !t.sink.Takes(tr.Event) {
				t.acked = tr.Seq
				continue
			}
			out = append(out, job{group: o.group, sink: t.sink, transition: tr})
			break
		}
	}
	n.report(key, o, "")
	return out
}

// settle records a delivery's result, and signals more work after a success.
func (n *notifier) settle(key types.NamespacedName, j job, err error) {
	n.metrics.Observe(string(j.sink.Scope), err == nil)
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.sinks[j.sink.URL]
	if err != nil {
		if s == nil {
			s = &sinkState{}
			n.sinks[j.sink.URL] = s
		}
		s.backoff = min(max(2*s.backoff, firstSinkBackoff), maxSinkBackoff)
		s.retryAt, s.failure = n.clock.Now().Add(s.backoff), err.Error()
	} else {
		delete(n.sinks, j.sink.URL)
	}
	o, ok := n.outboxes[key]
	if !ok || o.group.UID != j.group.UID {
		return
	}
	for i := range o.targets {
		if t := &o.targets[i]; err == nil && t.sink == j.sink && j.transition.Seq > t.acked {
			t.acked = j.transition.Seq
		}
	}
	failure := ""
	if err != nil {
		failure = j.sink.Describe() + ": " + err.Error()
	}
	n.report(key, o, failure)
	if err == nil {
		n.signal()
	}
}

// report makes the group's report from its sinks' acknowledgments, and queues the group when it
// changed: failure, when not empty, replaces the failure reported.
func (n *notifier) report(key types.NamespacedName, o *outbox, failure string) {
	acked := o.next - 1
	for _, t := range o.targets {
		acked = min(acked, t.acked)
	}
	r := planner.Delivery{UID: o.group.UID, Acked: acked, Failure: o.reported.Failure}
	if failure != "" {
		r.Failure = failure
	} else if acked >= o.next-1 {
		r.Failure = ""
	}
	if r != o.reported {
		o.reported = r
		n.wakeIdle(key)
	}
}

// dropped is how many transitions the outbox dropped unsent.
func dropped(st *v1alpha1.NotificationsStatus) int64 {
	if st == nil {
		return 0
	}
	return st.Dropped
}

// notifyInput is what Decide is told of the group's sinks and deliveries.
func (r *OaatGroupReconciler) notifyInput(key types.NamespacedName) planner.Notify {
	return planner.Notify{
		ClusterSink:       r.Notify.Sink != nil && r.Notify.Send != nil,
		GroupSinkPrefixes: r.groupSinkPrefixes(),
		Delivery:          r.notifier.delivery(key),
	}
}

// groupSinkPrefixes are the prefixes a group's sink may start with; none without a sender.
func (r *OaatGroupReconciler) groupSinkPrefixes() []string {
	if r.Notify.Send == nil {
		return nil
	}
	return r.Notify.GroupSinkPrefixes
}

// groupSink is the group's spec.notify when the manager may send to it, else nil.
func (r *OaatGroupReconciler) groupSink(group *v1alpha1.OaatGroup) *v1alpha1.Notify {
	if n := group.Spec.Notify; n != nil && planner.SinkAllowed(n.Sink, r.groupSinkPrefixes()) {
		return n
	}
	return nil
}
