package controllers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/leader"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

var podsResource = schema.GroupResource{Resource: "pods"}

// laggingCache is a view of the fake API server through a cache that has not seen the pods named
// in hidden yet.
func laggingCache(server client.WithWatch, hidden *[]string) client.WithWatch {
	return interceptor.NewClient(server, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Pod); ok && slices.Contains(*hidden, key.Name) {
				return apierrors.NewNotFound(podsResource, key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if pods, ok := list.(*corev1.PodList); ok {
				pods.Items = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return slices.Contains(*hidden, p.Name) })
			}
			return nil
		},
	})
}

// A definite refusal withdraws the run: Ready says why, and the next attempt waits.
func TestDefiniteRefusalWithdrawsTheRun(t *testing.T) {
	refusals := map[string]error{
		"quota":     apierrors.NewForbidden(podsResource, "g-a-1", errors.New("exceeded quota: pods, requested: pods=1, used: pods=10, limited: pods=10")),
		"invalid":   apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "g-a-1", nil),
		"forbidden": apierrors.NewForbidden(podsResource, "g-a-1", errors.New("not allowed")),
	}
	for name, refusal := range refusals {
		t.Run(name, func(t *testing.T) {
			server := newFakeClient(t, interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if _, ok := obj.(*corev1.Pod); ok {
						return refusal
					}
					return c.Create(ctx, obj, opts...)
				},
			}, builders.Type().Obj(), builders.Group("a").Named("g").Obj())
			r := newTestReconciler(server, server)
			if _, err := r.reconcile(t, "g"); err != nil {
				t.Fatalf("pass: %v", err)
			}
			g := getGroup(t, server, "g")
			ready := findCondition(g, v1alpha1.ConditionReady)
			if g.Status.CurrentRun != nil || ready == nil || ready.Reason != string(v1alpha1.ReasonPodCreateFailed) {
				t.Fatalf("currentRun %+v, Ready %+v: want the run withdrawn", g.Status.CurrentRun, ready)
			}
		})
	}
}

func findCondition(g *v1alpha1.OaatGroup, condType string) *metav1.Condition {
	for i := range g.Status.Conditions {
		if g.Status.Conditions[i].Type == condType {
			return &g.Status.Conditions[i]
		}
	}
	return nil
}

// A process that no longer holds the leader-election Lease (another replica took over while it
// was paused) neither writes the intent of a run nor creates its pod, and says it lost the Lease
// once (the manager then exits).
func TestNoCreateWithoutTheLease(t *testing.T) {
	id := leader.Identity{Lease: client.ObjectKey{Namespace: "system", Name: "oaat-operator.oaat.io"}, Holder: "me"}
	lease := func(holder string, renewed time.Time) *coordinationv1.Lease {
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: id.Lease.Name, Namespace: id.Lease.Namespace},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15),
				RenewTime: &metav1.MicroTime{Time: renewed},
			},
		}
	}
	tests := map[string]struct {
		lease  *coordinationv1.Lease
		create bool
	}{
		"held":            {lease: lease("me", builders.T0.Add(-time.Second)), create: true},
		"taken over":      {lease: lease("other", builders.T0.Add(-time.Second))},
		"expired (pause)": {lease: lease("me", builders.T0.Add(-time.Minute))},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), builders.Group("a").Named("g").Obj(), tt.lease)
			r := newTestReconciler(server, server)
			lost := 0
			r.Leader = &leader.Guard{Reader: server, Identity: id, Clock: r.clock, OnLost: func(error) { lost++ }}
			_, err := r.reconcile(t, "g")
			pods := listPods(t, server)
			if tt.create {
				if err != nil || len(pods) != 1 || lost != 0 {
					t.Fatalf("holding the lease: error %v, pods %v, lost %d", err, podNames(pods), lost)
				}
				return
			}
			if !errors.Is(err, leader.ErrNotLeader) || len(pods) != 0 {
				t.Fatalf("without the lease: error %v, pods %v", err, podNames(pods))
			}
			if cr := getGroup(t, server, "g").Status.CurrentRun; cr != nil {
				t.Fatalf("a process that does not lead wrote the intent of a run: %+v", cr)
			}
			if _, err := r.reconcile(t, "g"); !errors.Is(err, leader.ErrNotLeader) || lost != 1 {
				t.Fatalf("second pass: error %v, OnLost called %d times, want once", err, lost)
			}
		})
	}
}

// A leader that loses the Lease between the intent's write and the pod's create (a pause right
// after the write) creates no pod: the intent stays, for the new leader to record.
func TestNoCreateWhenTheLeaseIsLostAfterTheIntent(t *testing.T) {
	id := leader.Identity{Lease: client.ObjectKey{Namespace: "system", Name: "oaat-operator.oaat.io"}, Holder: "me"}
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: id.Lease.Name, Namespace: id.Lease.Namespace},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("me"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: builders.T0.Add(-time.Second)},
		},
	}
	server := newFakeClient(t, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := c.SubResource(sub).Update(ctx, obj, opts...); err != nil {
				return err
			}
			// Another replica takes the Lease while this one is paused after the write.
			taken := &coordinationv1.Lease{}
			if err := c.Get(ctx, id.Lease, taken); err != nil {
				return err
			}
			taken.Spec.HolderIdentity = ptr.To("other")
			return c.Update(ctx, taken)
		},
	}, builders.Type().Obj(), builders.Group("a").Named("g").Obj(), lease)
	r := newTestReconciler(server, server)
	lost := 0
	r.Leader = &leader.Guard{Reader: server, Identity: id, Clock: r.clock, OnLost: func(error) { lost++ }}
	_, err := r.reconcile(t, "g")
	if pods := listPods(t, server); !errors.Is(err, leader.ErrNotLeader) || len(pods) != 0 || lost != 1 {
		t.Fatalf("error %v, pods %v, OnLost called %d times", err, podNames(pods), lost)
	}
	if cr := getGroup(t, server, "g").Status.CurrentRun; cr == nil {
		t.Fatal("the intent written while leading is gone")
	}
}

// A pod create that times out before the API server created the pod: the intent is kept, and the
// next pass, which finds no pod on the API server, records the run as a failed start.
func TestAmbiguousCreateErrorWithoutAPod(t *testing.T) {
	var failCreates atomic.Bool
	failCreates.Store(true)
	server := newFakeClient(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok && failCreates.Load() {
				return apierrors.NewTimeoutError("the request timed out", 1)
			}
			return c.Create(ctx, obj, opts...)
		},
	}, builders.Type().Obj(), builders.Group("a", "b").Named("g").Obj())
	r := newTestReconciler(server, server)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass with the ambiguous error: %v", err)
	}
	cr := getGroup(t, server, "g").Status.CurrentRun
	if cr == nil || len(listPods(t, server)) != 0 {
		t.Fatalf("currentRun %+v, pods %v: want the intent kept and no pod", cr, podNames(listPods(t, server)))
	}
	failCreates.Store(false)
	r.clock.Step(planner.MinRetry)
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("next pass: %v", err)
	}
	g := getGroup(t, server, "g")
	var failed *v1alpha1.ItemStatus
	for i := range g.Status.Items {
		if g.Status.Items[i].Name == cr.Item {
			failed = &g.Status.Items[i]
		}
	}
	if failed == nil || failed.LastReason != string(v1alpha1.ReasonPodNotFound) || failed.FailureCount != 1 || failed.LastPodName != cr.PodName {
		t.Fatalf("item %s = %+v, want a failed start (PodNotFound)", cr.Item, failed)
	}
	if pods := listPods(t, server); len(pods) != 1 || g.Status.CurrentRun == nil || pods[0].Name != g.Status.CurrentRun.PodName {
		t.Fatalf("pods %v, currentRun %+v: want the other item started", podNames(pods), g.Status.CurrentRun)
	}
}

// A failure of the API server ends the pass in the phase it hit, and the error names that phase
// (applyPhases): the status write of a start, and the creation of its pod by a process that lost
// the Lease.
func TestFailureNamesItsPhase(t *testing.T) {
	timeout := apierrors.NewTimeoutError("the server was slow", 1)
	for _, tc := range []struct {
		phase string
		funcs interceptor.Funcs
	}{
		{phase: "persist the status: ", funcs: interceptor.Funcs{
			SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
				return timeout
			},
		}},
		{phase: "create the pod: ", funcs: interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, ok := obj.(*corev1.Pod); ok {
					return leader.ErrNotLeader
				}
				return c.Create(ctx, obj, opts...)
			},
		}},
	} {
		t.Run(tc.phase, func(t *testing.T) {
			server := newFakeClient(t, tc.funcs, builders.Type().Obj(), builders.Group("a").Named("g").Obj())
			r := newTestReconciler(server, server)
			_, err := r.reconcile(t, "g")
			if err == nil || !strings.HasPrefix(err.Error(), tc.phase) {
				t.Fatalf("error %v, want one of phase %q", err, tc.phase)
			}
		})
	}
}

// alongside runs its two phases at the same time (each here waits for the other to have started)
// and ends the pass with the first's result and the errors of both, each named by its phase.
func TestAlongsideRunsBothPhasesAtOnce(t *testing.T) {
	firstStarted, secondStarted := make(chan struct{}), make(chan struct{})
	meet := func(mine, theirs chan struct{}) error {
		close(mine)
		select {
		case <-theirs:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("the other phase did not start meanwhile")
		}
	}
	want := requeueAfter(time.Minute)
	phase := alongside(
		applyPhase{name: "first", run: func(context.Context, *applying) (*ctrl.Result, error) {
			return want, errors.Join(meet(firstStarted, secondStarted), errors.New("first failed"))
		}},
		applyPhase{name: "second", run: func(context.Context, *applying) (*ctrl.Result, error) {
			return nil, errors.Join(meet(secondStarted, firstStarted), errors.New("second failed"))
		}},
	)
	result, err := phase.run(context.Background(), &applying{})
	if result != want {
		t.Errorf("result %v, want the first phase's %v", result, want)
	}
	if err == nil || err.Error() != "first: first failed\nsecond: second failed" {
		t.Errorf("error %q, want both phases' errors, each named, and no other", err)
	}
	if !phase.namesItsErrors || phase.name != "first and second" {
		t.Errorf("phase %q (names its errors: %t), want \"first and second\", naming its errors", phase.name, phase.namesItsErrors)
	}
}
