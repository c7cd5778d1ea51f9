package controllers

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

var oaatRunsResource = schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "oaatruns"}

// onDemandRunReconciler is an on-demand run reconciler whose cache is c and whose direct reads go to apiReader.
type onDemandRunReconciler struct {
	*OnDemandRunReconciler
	clock    *clocktesting.FakeClock
	recorder *events.FakeRecorder
}

// newOnDemandRunReconciler starts its clock 1.5 s past builders.T0, so that a time stamped in status shows
// that it was taken from the clock and truncated to the second.
func newOnDemandRunReconciler(c client.Client, apiReader client.Reader) onDemandRunReconciler {
	clock := clocktesting.NewFakeClock(builders.T0.Add(1500 * time.Millisecond))
	recorder := events.NewFakeRecorder(100)
	runs := metrics.NewRunMetrics()
	r := &OnDemandRunReconciler{Client: c, APIReader: apiReader, Recorder: recorder, Clock: clock, Runs: runs}
	r.onDemandRuns = onDemandRunWriter{client: c, recorder: recorder, runs: runs}
	return onDemandRunReconciler{OnDemandRunReconciler: r, clock: clock, recorder: recorder}
}

func (r onDemandRunReconciler) reconcile(t *testing.T, name string) (ctrl.Result, error) {
	t.Helper()
	return r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNamespace, Name: name}})
}

func testOnDemandRun(name, group string, status v1alpha1.OaatRunStatus) *v1alpha1.OaatRun {
	return &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(builders.T0)},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: group, Item: "a"},
		Status:     status,
	}
}

// getOnDemandRun returns the on-demand run, nil when it does not exist.
func getOnDemandRun(t *testing.T, c client.Reader, name string) *v1alpha1.OaatRun {
	t.Helper()
	onDemandRun := &v1alpha1.OaatRun{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: name}, onDemandRun)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading OaatRun %s: %v", name, err)
	}
	return onDemandRun
}

// A finished on-demand run is kept for its time to live after it finished (an hour when it has
// none), then deleted, if it is still the on-demand run that was read; an on-demand run gone
// meanwhile is no error.
func TestFinishedOnDemandRunExpires(t *testing.T) {
	finished := stamp(builders.T0)
	done := v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunSucceeded, Reason: "Completed", FinishedAt: &finished}
	tests := map[string]struct {
		ttl        v1alpha1.Duration
		after      time.Duration // since it finished
		deleteErr  error
		wantResult ctrl.Result
		wantErr    bool
		wantKept   bool
		wantDelete bool
	}{
		"before its ttl":        {ttl: "10m", after: 4 * time.Minute, wantResult: ctrl.Result{RequeueAfter: 6 * time.Minute}, wantKept: true},
		"before the default":    {after: 59 * time.Minute, wantResult: ctrl.Result{RequeueAfter: time.Minute}, wantKept: true},
		"malformed ttl":         {ttl: "soon", after: 30 * time.Minute, wantResult: ctrl.Result{RequeueAfter: 30 * time.Minute}, wantKept: true},
		"at its ttl":            {ttl: "10m", after: 10 * time.Minute, wantDelete: true},
		"past the default":      {after: 2 * time.Hour, wantDelete: true},
		"deleted meanwhile":     {ttl: "10m", after: time.Hour, deleteErr: apierrors.NewNotFound(oaatRunsResource, "r"), wantKept: true, wantDelete: true},
		"cannot be deleted now": {ttl: "10m", after: time.Hour, deleteErr: apierrors.NewServiceUnavailable("etcd is away"), wantErr: true, wantKept: true, wantDelete: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			onDemandRun := testOnDemandRun("r", "g", done)
			onDemandRun.Spec.TTLAfterFinished = tt.ttl
			var preconditions []*metav1.Preconditions
			c := newFakeClient(t, recordDeletes(&preconditions, tt.deleteErr), onDemandRun)
			r := newOnDemandRunReconciler(c, c)
			r.clock.SetTime(builders.T0.Add(tt.after))

			res, err := r.reconcile(t, "r")
			expectResult(t, res, err, tt.wantResult, tt.wantErr)
			if kept := getOnDemandRun(t, c, "r") != nil; kept != tt.wantKept {
				t.Errorf("on-demand run kept: %t, want %t", kept, tt.wantKept)
			}
			var want []*metav1.Preconditions
			if tt.wantDelete {
				want = []*metav1.Preconditions{{UID: ptr.To(onDemandRun.UID)}}
			}
			if diff := cmp.Diff(want, preconditions); diff != "" {
				t.Errorf("deletes (-want +got):\n%s", diff)
			}
		})
	}
}

// An open on-demand run whose group does not exist on the API server ends: Rejected, or Failed when
// its run had started, stamped with the time of the decision, and reported once.
func TestOrphanOnDemandRun(t *testing.T) {
	now := stamp(builders.T0.Add(1500 * time.Millisecond))
	started := stamp(builders.T0.Add(-time.Minute))
	tests := map[string]struct {
		status     v1alpha1.OaatRunStatus
		wantStatus v1alpha1.OaatRunStatus
		wantEvents []string
	}{
		"pending": {
			status: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending, Reason: string(v1alpha1.ReasonQueued), Message: "waits"},
			wantStatus: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunRejected, Reason: string(v1alpha1.ReasonGroupNotFound),
				Message: "OaatGroup g does not exist in namespace ns", FinishedAt: &now},
			wantEvents: []string{"Warning GroupNotFound Rejected: OaatGroup g does not exist in namespace ns"},
		},
		"new": {
			wantStatus: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunRejected, Reason: string(v1alpha1.ReasonGroupNotFound),
				Message: "OaatGroup g does not exist in namespace ns", FinishedAt: &now},
			wantEvents: []string{"Warning GroupNotFound Rejected: OaatGroup g does not exist in namespace ns"},
		},
		"in progress": {
			status: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunInProgress, Reason: string(v1alpha1.ReasonItemRunning),
				Message: "runs", PodName: "g-a-1", StartedAt: &started},
			wantStatus: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunFailed, Reason: string(v1alpha1.ReasonGroupDeleted),
				Message: `OaatGroup g was deleted while item "a" ran`, PodName: "g-a-1", StartedAt: &started, FinishedAt: &now},
			wantEvents: []string{`Warning GroupDeleted Failed: OaatGroup g was deleted while item "a" ran`},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := newFakeClient(t, interceptor.Funcs{}, testOnDemandRun("r", "g", tt.status))
			r := newOnDemandRunReconciler(c, c)
			res, err := r.reconcile(t, "r")
			if err != nil || res != (ctrl.Result{}) {
				t.Fatalf("result %+v, error %v", res, err)
			}
			if diff := cmp.Diff(tt.wantStatus, getOnDemandRun(t, c, "r").Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEvents, drainEvents(r.recorder)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			// The finished on-demand run is left to expire: the next pass neither writes nor
			// reports.
			version := getOnDemandRun(t, c, "r").ResourceVersion
			expiry := now.Add(time.Hour).Sub(r.clock.Now())
			if res, err := r.reconcile(t, "r"); err != nil || res != (ctrl.Result{RequeueAfter: expiry}) {
				t.Fatalf("next pass: result %+v, error %v; want a wait for its expiry", res, err)
			}
			if got := getOnDemandRun(t, c, "r"); got.ResourceVersion != version {
				t.Errorf("next pass wrote the on-demand run again: %+v", got.Status)
			}
		})
	}
}

// The on-demand run's group is checked on the API server, not in the cache, and the on-demand run
// is left as it is whenever its end cannot be decided or written now.
func TestOrphanOnDemandRunEdge(t *testing.T) {
	pending := v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending, Reason: string(v1alpha1.ReasonQueued), Message: "waits"}
	unavailable := apierrors.NewServiceUnavailable("etcd is away")
	tests := map[string]struct {
		groupOnServer bool
		readerErr     error
		updateErr     error
		wantErr       error
	}{
		"group only on the API server":    {groupOnServer: true},
		"group cannot be read":            {readerErr: unavailable, wantErr: unavailable},
		"on-demand run changed meanwhile": {updateErr: apierrors.NewConflict(oaatRunsResource, "r", errors.New("modified"))},
		"on-demand run deleted meanwhile": {updateErr: apierrors.NewNotFound(oaatRunsResource, "r")},
		"status cannot be written":        {updateErr: unavailable, wantErr: unavailable},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			onDemandRun := testOnDemandRun("r", "g", pending)
			objs := []client.Object{onDemandRun}
			if tt.groupOnServer {
				objs = append(objs, builders.Group("a").Named("g").Obj())
			}
			server := newFakeClient(t, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*v1alpha1.OaatGroup); ok && tt.readerErr != nil {
						return tt.readerErr
					}
					return c.Get(ctx, key, obj, opts...)
				},
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if tt.updateErr != nil {
						return tt.updateErr
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			}, objs...)
			cache := newFakeClient(t, interceptor.Funcs{}, onDemandRun) // never shows the group
			r := newOnDemandRunReconciler(cachedView(cache, server), server)

			res, err := r.reconcile(t, "r")
			if !errors.Is(err, tt.wantErr) || res != (ctrl.Result{}) {
				t.Fatalf("result %+v, error %v; want error %v", res, err, tt.wantErr)
			}
			if diff := cmp.Diff(pending, getOnDemandRun(t, server, "r").Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if reported := drainEvents(r.recorder); len(reported) != 0 {
				t.Errorf("events %q for an end that was not written", reported)
			}
		})
	}
}

// The on-demand runs of a group are those that name it, in its namespace.
func TestGroupToOnDemandRuns(t *testing.T) {
	mine := testOnDemandRun("mine", "g", v1alpha1.OaatRunStatus{})
	other := testOnDemandRun("other", "h", v1alpha1.OaatRunStatus{})
	elsewhere := testOnDemandRun("elsewhere", "g", v1alpha1.OaatRunStatus{})
	elsewhere.Namespace = "other-ns"
	c := newFakeClient(t, interceptor.Funcs{}, mine, other, elsewhere)
	r := newOnDemandRunReconciler(c, c)
	got := r.groupToOnDemandRuns(context.Background(), builders.Group().Named("g").Obj())
	want := []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: testNamespace, Name: "mine"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("on-demand runs (-want +got):\n%s", diff)
	}
	failing := newFakeClient(t, interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return fmt.Errorf("cache not synced")
		},
	})
	if got := newOnDemandRunReconciler(failing, failing).groupToOnDemandRuns(context.Background(), builders.Group().Named("g").Obj()); len(got) != 0 {
		t.Errorf("on-demand runs %v from a list that failed", got)
	}
}
