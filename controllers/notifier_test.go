package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/notify"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// sinkRecorder is a sender that records what it is given and fails for the sinks marked down.
type sinkRecorder struct {
	mu   sync.Mutex
	sent []string
	down map[string]bool
}

func (s *sinkRecorder) send(_ context.Context, sink notify.Sink, g notify.Group, t v1alpha1.Transition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down[sink.URL] {
		return errors.New("connection refused")
	}
	s.sent = append(s.sent, fmt.Sprintf("%s %s %s", sink.URL, g.Name, notify.ID(g, t)))
	return nil
}

func (s *sinkRecorder) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sent
	s.sent = nil
	return out
}

// TestNotifierRounds drives the notifier's rounds by hand with a fixed clock: each group's
// transitions reach each of its sinks in order; a sink down is left out until its backoff ends,
// without holding back another sink; the report is the last transition every sink acknowledged,
// a transition a sink does not take counting as acknowledged by it; a new group of the same name
// starts afresh.
func TestNotifierRounds(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(builders.T0)
	rec := &sinkRecorder{down: map[string]bool{}}
	n := newNotifier(clk, NotifyOptions{Sink: &notify.Sink{URL: "http://cluster", Scope: notify.ScopeCluster}, Send: rec.send})
	q := priorityqueue.New[reconcile.Request]("notifier-test")
	defer q.ShutDown()
	if err := n.source().Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	g := builders.Group("a").Obj()
	g.UID = "u1"
	key := types.NamespacedName{Namespace: g.Namespace, Name: g.Name}
	outbox := func(first, next int64, events ...v1alpha1.NotifyEvent) *v1alpha1.NotificationsStatus {
		out := &v1alpha1.NotificationsStatus{Next: next}
		for seq := first; seq < next; seq++ {
			out.Pending = append(out.Pending, v1alpha1.Transition{Seq: seq, Event: events[seq-first]})
		}
		return out
	}
	teamSink := &v1alpha1.Notify{Sink: "http://team", Events: []v1alpha1.NotifyEvent{v1alpha1.NotifyRunFailed}}
	rounds := func(k int) []string {
		var all []string
		for range k {
			n.round(ctx)
			all = append(all, rec.take()...)
		}
		slices.Sort(all)
		return all
	}
	check := func(step string, got, want []string, acked int64, failure string) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: sent (-want +got):\n%s", step, diff)
		}
		d := n.delivery(key)
		if d == nil || d.Acked != acked || d.Failure != failure || d.UID != "u1" {
			t.Errorf("%s: report %+v, want acked %d, failure %q", step, d, acked, failure)
		}
	}

	n.consider(g, outbox(0, 2, v1alpha1.NotifyRunFailed, v1alpha1.NotifyBreakerOpened), teamSink)
	check("both sinks up", rounds(3), []string{
		"http://cluster " + g.Name + " u1/0", "http://cluster " + g.Name + " u1/1", "http://team " + g.Name + " u1/0",
	}, 1, "")

	rec.down["http://team"] = true
	n.consider(g, outbox(0, 4, v1alpha1.NotifyRunFailed, v1alpha1.NotifyBreakerOpened, v1alpha1.NotifyRunFailed, v1alpha1.NotifyRunFailed), teamSink)
	check("the team's sink down", rounds(3), []string{"http://cluster " + g.Name + " u1/2", "http://cluster " + g.Name + " u1/3"},
		1, "http://team: connection refused")
	if got := n.round(ctx); got != time.Second {
		t.Errorf("after the first failure the next round is in %s, want 1s (the sink's first backoff)", got)
	}

	rec.down["http://team"] = false
	clk.SetTime(builders.T0.Add(time.Second))
	check("the team's sink back after its backoff", rounds(3), []string{"http://team " + g.Name + " u1/2", "http://team " + g.Name + " u1/3"}, 3, "")

	g2 := g.DeepCopy()
	g2.UID = "u2"
	n.consider(g2, outbox(0, 1, v1alpha1.NotifyAtRisk), nil)
	if got := rounds(2); !cmp.Equal(got, []string{"http://cluster " + g.Name + " u2/0"}) {
		t.Errorf("a new group of the name: sent %v, want its own transition once", got)
	}
	if d := n.delivery(key); d == nil || d.UID != "u2" || d.Acked != 0 {
		t.Errorf("a new group of the name: report %+v, want u2 acked 0", d)
	}
	rec.down["http://cluster"] = true
	n.consider(g2, outbox(0, 2, v1alpha1.NotifyAtRisk, v1alpha1.NotifyRunFailed), nil)
	rounds(1)
	if len(n.sinks) != 1 {
		t.Fatalf("after a failed delivery the notifier keeps %d sink backoffs, want 1", len(n.sinks))
	}
	n.forget(key)
	if d := n.delivery(key); d != nil {
		t.Errorf("a deleted group: report %+v, want none", d)
	}
	n.round(ctx)
	if len(n.sinks) != 0 {
		t.Errorf("the backoff of a sink no group sends to is kept: %v", n.sinks)
	}
}
