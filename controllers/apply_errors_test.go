package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The unit tests of the group reconciler's I/O edge: what it does when the API server answers a
// write with a conflict, AlreadyExists, an ambiguous error or a refusal, and when the cache lags
// behind the API server. Statuses are compared whole, so that a failure shows what differs.

var groupsResource = schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "oaatgroups"}

// cachedView is the manager's client over a cache that is a store of its own, which may lag
// behind the API server: reads go to cache, writes to server.
func cachedView(cache client.Reader, server client.WithWatch) client.WithWatch {
	return interceptor.NewClient(server, interceptor.Funcs{
		Get: func(ctx context.Context, _ client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			return cache.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, _ client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return cache.List(ctx, list, opts...)
		},
	})
}

// expectResult fails the test unless a pass returned want, and an error exactly when wantErr.
func expectResult(t *testing.T, res ctrl.Result, err error, want ctrl.Result, wantErr bool) {
	t.Helper()
	if (err != nil) != wantErr || res != want {
		t.Fatalf("result %+v, error %v; want %+v, error %t", res, err, want, wantErr)
	}
}

// recordDeletes records the preconditions of each delete, and answers it with err, or deletes
// when err is nil.
func recordDeletes(preconditions *[]*metav1.Preconditions, err error) interceptor.Funcs {
	return interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			*preconditions = append(*preconditions, (&client.DeleteOptions{}).ApplyOptions(opts).Preconditions)
			if err != nil {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
	}
}

// stamp is t as status stores it.
func stamp(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }

// startedStatus is the status of group g of items whose first pass at t0 started the first item
// as run 1.
func startedStatus(items ...string) v1alpha1.OaatGroupStatus {
	t0 := stamp(builders.T0)
	item := items[0]
	pod := podbuild.Name("g", item, 1)
	entries := []v1alpha1.ItemStatus{{Name: item, LastStarted: &t0, WaitReason: v1alpha1.WaitRunning}}
	for _, other := range items[1:] {
		entries = append(entries, v1alpha1.ItemStatus{Name: other})
	}
	return v1alpha1.OaatGroupStatus{
		ObservedGeneration: 1,
		Conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: t0,
				Reason: string(v1alpha1.ReasonReady), Message: fmt.Sprintf("OaatType sleeper found, %d items", len(items))},
			{Type: v1alpha1.ConditionRunning, Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: t0,
				Reason: string(v1alpha1.ReasonItemRunning), Message: fmt.Sprintf("Item %q runs in pod %s", item, pod)},
			// No AtRisk: the pass hands its forecast to the forecaster, a later pass writes it.
		},
		CurrentRun: &v1alpha1.CurrentRun{Item: item, PodName: pod, StartedAt: t0},
		RunCount:   1,
		ItemCount:  int32(len(items)),
		Items:      entries,
	}
}

// withdrawnStatus is the status of a one-item group whose first run was withdrawn because its
// pod's create failed with text.
func withdrawnStatus(text string) v1alpha1.OaatGroupStatus {
	s := startedStatus("a")
	s.CurrentRun = nil
	s.Conditions = []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: 1, LastTransitionTime: stamp(builders.T0),
			Reason: string(v1alpha1.ReasonPodCreateFailed), Message: text},
		{Type: v1alpha1.ConditionRunning, Status: metav1.ConditionFalse, ObservedGeneration: 1, LastTransitionTime: stamp(builders.T0),
			Reason: string(v1alpha1.ReasonIdle), Message: "No item pod is active"},
	}
	return s
}

// runsTotal is how many finished runs the reconciler's metrics have counted.
func runsTotal(t *testing.T, r testReconciler, c client.Reader) int {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, r.Runs, metrics.NewStatusCollector(c, r.clock)); err != nil {
		t.Fatal(err)
	}
	n, err := testutil.GatherAndCount(reg, "oaat_item_runs_total")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A status write that loses an optimistic-lock race writes and reports nothing more: no pod, no
// event, no run counted; the group is looked at again soon, with a fresh read.
func TestStatusWriteConflict(t *testing.T) {
	conflict := apierrors.NewConflict(groupsResource, "g", errors.New("the object has been modified"))
	tests := map[string]struct {
		// prepare brings the group to the state of the pass whose status write conflicts.
		prepare func(t *testing.T, r testReconciler, c client.Client)
	}{
		"starting a run": {prepare: func(*testing.T, testReconciler, client.Client) {}},
		"recording the end of a run": {prepare: func(t *testing.T, r testReconciler, c client.Client) {
			t.Helper()
			if _, err := r.reconcile(t, "g"); err != nil {
				t.Fatalf("first pass: %v", err)
			}
			r.clock.Step(time.Minute)
			finishPod(t, c, podbuild.Name("g", "a", 1), 0, r.clock.Now())
			drainEvents(r.recorder)
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var fail error
			server := newFakeClient(t, interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if _, ok := obj.(*v1alpha1.OaatGroup); ok && fail != nil {
						return fail
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			}, builders.Type().Obj(), builders.Group("a", "b").Named("g").Obj())
			r := newTestReconciler(server, server)
			tt.prepare(t, r, server)
			before := getGroup(t, server, "g").Status
			pods := podNames(listPods(t, server))

			fail = conflict
			res, err := r.reconcile(t, "g")
			if err != nil || res != (ctrl.Result{RequeueAfter: conflictRetry}) {
				t.Fatalf("result %+v, error %v; want a requeue after %v", res, err, conflictRetry)
			}
			if diff := cmp.Diff(before, getGroup(t, server, "g").Status); diff != "" {
				t.Errorf("status changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(pods, podNames(listPods(t, server))); diff != "" {
				t.Errorf("pods changed (-before +after):\n%s", diff)
			}
			if events := drainEvents(r.recorder); len(events) != 0 {
				t.Errorf("events %q reported for a state that was not written", events)
			}
			if n := runsTotal(t, r, server); n != 0 {
				t.Errorf("%d runs counted for an outcome that was not written", n)
			}
		})
	}
}

// A pod create answered with AlreadyExists: the pod is the run's when the group controls it (a
// create retried after the first attempt succeeded), and the run starts; a pod of that name that
// is not the group's makes the run fail to start, and is left alone; a pod that exists but cannot
// be read proves nothing, and the intent stays.
func TestPodAlreadyExists(t *testing.T) {
	podName := podbuild.Name("g", "a", 1)
	foreign := builders.Pod(podName).UID("foreign").Phase(corev1.PodRunning).Obj()
	// createTwice creates the pod and answers as a retried request would: AlreadyExists.
	createTwice := func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if err := c.Create(ctx, obj, opts...); err != nil {
			return err
		}
		if _, ok := obj.(*corev1.Pod); ok {
			return apierrors.NewAlreadyExists(podsResource, obj.GetName())
		}
		return nil
	}
	foreignMessage := fmt.Sprintf("Creating pod %s for item \"a\" failed: a pod named %s exists already and this group does not control it",
		podName, podName)
	tests := map[string]struct {
		existing   []client.Object
		funcs      interceptor.Funcs
		readerErr  error
		wantStatus v1alpha1.OaatGroupStatus
		wantResult ctrl.Result
		wantEvents []string
		wantPodUID string // of the pod named podName; "" for the one the reconciler created
	}{
		"the group's own": {
			funcs:      interceptor.Funcs{Create: createTwice},
			wantStatus: startedStatus("a"),
		},
		"another's": {
			existing:   []client.Object{foreign},
			wantStatus: withdrawnStatus(foreignMessage),
			wantResult: ctrl.Result{RequeueAfter: planner.MinRetry},
			wantEvents: []string{fmt.Sprintf("Warning %s %s", v1alpha1.ReasonPodCreateFailed, foreignMessage)},
			wantPodUID: "foreign",
		},
		"unreadable": {
			funcs:      interceptor.Funcs{Create: createTwice},
			readerErr:  apierrors.NewServiceUnavailable("etcd is away"),
			wantStatus: startedStatus("a"),
			wantResult: ctrl.Result{RequeueAfter: planner.MinRetry},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			server := newFakeClient(t, tt.funcs, append([]client.Object{builders.Type().Obj(), builders.Group("a").Named("g").Obj()}, tt.existing...)...)
			reader := client.Reader(server)
			if tt.readerErr != nil {
				reader = interceptor.NewClient(server, interceptor.Funcs{
					Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						if _, ok := obj.(*corev1.Pod); ok {
							return tt.readerErr
						}
						return c.Get(ctx, key, obj, opts...)
					},
				})
			}
			r := newTestReconciler(server, reader)
			res, err := r.reconcile(t, "g")
			if err != nil || res != tt.wantResult {
				t.Fatalf("result %+v, error %v; want %+v", res, err, tt.wantResult)
			}
			if diff := cmp.Diff(tt.wantStatus, getGroup(t, server, "g").Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEvents, drainEvents(r.recorder)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			pods := listPods(t, server)
			if len(pods) != 1 || pods[0].Name != podName || (tt.wantPodUID != "" && string(pods[0].UID) != tt.wantPodUID) {
				t.Fatalf("pods %v (UIDs %v); want the one pod %s", podNames(pods), podUIDs(pods), podName)
			}
		})
	}
}

func podUIDs(pods []corev1.Pod) []string {
	uids := make([]string, 0, len(pods))
	for _, p := range pods {
		uids = append(uids, string(p.UID))
	}
	return uids
}

// Pod creates that fail without proof that the pod was not created (the API server may have
// created it before the answer was lost): the intent stays, the next passes find the pod on the
// API server although the cache does not show it, and the run is not started twice.
func TestAmbiguousCreateErrors(t *testing.T) {
	ambiguous := map[string]error{
		"timeout":           apierrors.NewTimeoutError("the request timed out", 1),
		"server timeout":    apierrors.NewServerTimeout(podsResource, "create", 1),
		"internal error":    apierrors.NewInternalError(errors.New("etcdserver: request timed out")),
		"deadline exceeded": fmt.Errorf("Post \"https://10.0.0.1/api/v1/namespaces/ns/pods\": %w", context.DeadlineExceeded),
		"connection reset":  errors.New("read tcp 10.0.0.2:51234->10.0.0.1:443: read: connection reset by peer"),
	}
	for name, ambiguousErr := range ambiguous {
		t.Run(name, func(t *testing.T) {
			failed := false
			server := newFakeClient(t, interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if err := c.Create(ctx, obj, opts...); err != nil {
						return err
					}
					if _, ok := obj.(*corev1.Pod); ok && !failed {
						failed = true
						return ambiguousErr
					}
					return nil
				},
			}, builders.Type().Obj(), builders.Group("a", "b").Named("g").Obj())
			hidden := []string{podbuild.Name("g", "a", 1)}
			r := newTestReconciler(laggingCache(server, &hidden), server)

			res, err := r.reconcile(t, "g")
			if err != nil || res != (ctrl.Result{RequeueAfter: planner.MinRetry}) {
				t.Fatalf("result %+v, error %v; want a retry after %v", res, err, planner.MinRetry)
			}
			want := startedStatus("a", "b")
			if diff := cmp.Diff(want, getGroup(t, server, "g").Status); diff != "" {
				t.Fatalf("status after the ambiguous error (-want +got):\n%s", diff)
			}
			for range 3 {
				r.clock.Step(planner.MinRetry)
				if _, err := r.reconcile(t, "g"); err != nil {
					t.Fatalf("later pass: %v", err)
				}
			}
			if diff := cmp.Diff(hidden, podNames(listPods(t, server))); diff != "" {
				t.Fatalf("pods (-want +got): a second run started while the first may run:\n%s", diff)
			}
			if diff := cmp.Diff(want.CurrentRun, getGroup(t, server, "g").Status.CurrentRun); diff != "" {
				t.Fatalf("currentRun (-want +got):\n%s", diff)
			}
		})
	}
}

// A cache that lags behind the API server, as a store of its own. The current run's pod missing
// from it is read from the API server: the run goes on, and is not recorded as a pod that was
// never created. A cached group older than its pods (the cache has the pod of a run whose intent
// it does not show yet) is read again from the API server: the pod is the current run, not a
// rogue pod to delete. Either way nothing is written, deleted or started.
func TestCacheLagsBehind(t *testing.T) {
	tests := map[string]struct {
		// cached is what the cache holds, given the group and pods written by the first pass.
		cached func(written *v1alpha1.OaatGroup, pods []corev1.Pod) []client.Object
	}{
		"current pod missing": {cached: func(written *v1alpha1.OaatGroup, _ []corev1.Pod) []client.Object {
			return []client.Object{written}
		}},
		"group older than its pods": {cached: func(written *v1alpha1.OaatGroup, pods []corev1.Pod) []client.Object {
			stale := written.DeepCopy()
			stale.Status = v1alpha1.OaatGroupStatus{}
			return []client.Object{stale, &pods[0]}
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), builders.Group("a", "b").Named("g").Obj())
			if _, err := newTestReconciler(server, server).reconcile(t, "g"); err != nil {
				t.Fatalf("first pass: %v", err)
			}
			written, pods := getGroup(t, server, "g"), listPods(t, server)
			cache := newFakeClient(t, interceptor.Funcs{}, append(tt.cached(written, pods), builders.Type().Obj())...)

			r := newTestReconciler(cachedView(cache, server), server)
			r.clock.Step(10 * time.Second)
			if res, err := r.reconcile(t, "g"); err != nil || res.RequeueAfter != 0 {
				t.Fatalf("result %+v, error %v; want none", res, err)
			}
			if diff := cmp.Diff(written.Status, getGroup(t, server, "g").Status); diff != "" {
				t.Errorf("status (-written +after):\n%s", diff)
			}
			if diff := cmp.Diff(podNames(pods), podNames(listPods(t, server))); diff != "" {
				t.Errorf("pods (-before +after):\n%s", diff)
			}
			if events := drainEvents(r.recorder); len(events) != 0 {
				t.Errorf("events %q", events)
			}
		})
	}
}

// A live pod of the group on the API server that a separate, lagging cache does not show keeps a
// run from starting: nothing is written, and the group is looked at again soon.
func TestLivePodOnlyOnTheAPIServer(t *testing.T) {
	live := builders.Pod("unseen").OfGroup("g").Obj()
	server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), builders.Group("a").Named("g").Obj(), live)
	cache := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), builders.Group("a").Named("g").Obj())
	r := newTestReconciler(cachedView(cache, server), server)

	res, err := r.reconcile(t, "g")
	if err != nil || res != (ctrl.Result{RequeueAfter: cacheLagRetry}) {
		t.Fatalf("result %+v, error %v; want a requeue after %v", res, err, cacheLagRetry)
	}
	if diff := cmp.Diff(v1alpha1.OaatGroupStatus{}, getGroup(t, server, "g").Status); diff != "" {
		t.Errorf("status written though no run may start (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"unseen"}, podNames(listPods(t, server))); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}

	// Once the live pod has ended, the run starts.
	live.Status.Phase = corev1.PodSucceeded
	if err := server.Status().Update(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass after the pod ended: %v", err)
	}
	if diff := cmp.Diff(startedStatus("a"), getGroup(t, server, "g").Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// The API server cannot be asked whether a live pod exists: no run starts, and the error is
// returned for the controller's backoff.
func TestLivePodListFails(t *testing.T) {
	server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), builders.Group("a").Named("g").Obj())
	reader := interceptor.NewClient(server, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.PodList); ok {
				return apierrors.NewServiceUnavailable("etcd is away")
			}
			return c.List(ctx, list, opts...)
		},
	})
	r := newTestReconciler(server, reader)
	if _, err := r.reconcile(t, "g"); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("error %v, want the API server's", err)
	}
	if diff := cmp.Diff(v1alpha1.OaatGroupStatus{}, getGroup(t, server, "g").Status); diff != "" {
		t.Errorf("status written (-want +got):\n%s", diff)
	}
}

// A status the API server refuses as invalid: Ready says so in the status as last written, with
// one event; when that report itself conflicts or fails, nothing is announced.
func TestInvalidStatusWrite(t *testing.T) {
	invalid := apierrors.NewInvalid(groupKind, "g", field.ErrorList{field.Invalid(field.NewPath("status", "items"), "", "too many")})
	text := "The API server refused the group's new status; nothing starts until it can be written: " + invalid.Error()
	rejected := v1alpha1.OaatGroupStatus{Conditions: []metav1.Condition{{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, LastTransitionTime: stamp(builders.T0),
		Reason: string(v1alpha1.ReasonStatusRejected), Message: text,
	}}}
	tests := map[string]struct {
		reportErr  error
		wantStatus v1alpha1.OaatGroupStatus
		wantResult ctrl.Result
		wantErr    bool
		wantEvents []string
	}{
		"reported": {
			wantStatus: rejected,
			wantResult: ctrl.Result{RequeueAfter: planner.MinRetry},
			wantEvents: []string{fmt.Sprintf("Warning %s %s", v1alpha1.ReasonStatusRejected, text)},
		},
		"report conflicts": {
			reportErr:  apierrors.NewConflict(groupsResource, "g", errors.New("the object has been modified")),
			wantResult: ctrl.Result{RequeueAfter: conflictRetry},
		},
		"report fails": {
			reportErr: apierrors.NewServiceUnavailable("etcd is away"),
			wantErr:   true,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			server := newFakeClient(t, interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					g, ok := obj.(*v1alpha1.OaatGroup)
					switch {
					case !ok:
					case g.Status.ItemCount > 0: // the planned status
						return invalid
					case tt.reportErr != nil:
						return tt.reportErr
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			}, builders.Type().Obj(), builders.Group("a").Named("g").Obj())
			r := newTestReconciler(server, server)
			res, err := r.reconcile(t, "g")
			expectResult(t, res, err, tt.wantResult, tt.wantErr)
			if diff := cmp.Diff(tt.wantStatus, getGroup(t, server, "g").Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEvents, drainEvents(r.recorder)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if pods := listPods(t, server); len(pods) != 0 {
				t.Errorf("pods %v: nothing may start while the status cannot be written", podNames(pods))
			}
		})
	}
}

// A pod the API server refuses is withdrawn from status; when that write fails too, the error
// says both.
func TestWithdrawFails(t *testing.T) {
	refusal := apierrors.NewForbidden(podsResource, "", errors.New("exceeded quota"))
	unavailable := apierrors.NewServiceUnavailable("etcd is away")
	writes := 0
	server := newFakeClient(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok {
				return refusal
			}
			return c.Create(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			writes++
			if writes > 1 {
				return unavailable
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}, builders.Type().Obj(), builders.Group("a").Named("g").Obj())
	r := newTestReconciler(server, server)
	_, err := r.reconcile(t, "g")
	if !errors.Is(err, refusal) || !errors.Is(err, unavailable) {
		t.Fatalf("error %v; want both the refusal and the failed write", err)
	}
	if diff := cmp.Diff(startedStatus("a"), getGroup(t, server, "g").Status); diff != "" {
		t.Errorf("status (-want +got): the intent stays until it can be withdrawn:\n%s", diff)
	}
	if events := drainEvents(r.recorder); len(events) != 0 {
		t.Errorf("events %q for a withdrawal that was not written", events)
	}
}

// Pods to delete are deleted only while they are the pods the plan saw: a pod gone or replaced
// meanwhile is no error; any other failure is returned.
func TestDeletePod(t *testing.T) {
	rogue := func() *corev1.Pod {
		return builders.Pod("rogue").UID("rogue-1").OfGroup("g").Phase(corev1.PodRunning).Obj()
	}
	tests := map[string]struct {
		deleteErr error
		wantErr   bool
		wantPods  []string
	}{
		"deleted":  {wantPods: []string{}},
		"gone":     {deleteErr: apierrors.NewNotFound(podsResource, "rogue"), wantPods: []string{"rogue"}},
		"replaced": {deleteErr: apierrors.NewConflict(podsResource, "rogue", errors.New("UID precondition")), wantPods: []string{"rogue"}},
		"failed":   {deleteErr: apierrors.NewServiceUnavailable("etcd is away"), wantErr: true, wantPods: []string{"rogue"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var preconditions []*metav1.Preconditions
			server := newFakeClient(t, recordDeletes(&preconditions, tt.deleteErr), builders.Type().Obj(), builders.Group("a").Named("g").Obj(), rogue())
			r := newTestReconciler(server, server)
			// The rogue pod keeps the run from starting until it is gone: this pass only deletes.
			_, err := r.reconcile(t, "g")
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want an error: %t", err, tt.wantErr)
			}
			want := []*metav1.Preconditions{{UID: ptr.To(rogue().UID)}}
			if diff := cmp.Diff(want, preconditions); diff != "" {
				t.Errorf("delete preconditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPods, podNames(listPods(t, server))); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
		})
	}
}

// The pass that follows a start, run before the cache shows the pod just created (the group's own
// status write wakes it at once), reads nothing from the API server and decides nothing: it looks
// again after cacheLagRetry (expectations). A pod missing from the cache is read from the API
// server again once an event of the pod has satisfied the expectation, or once its bound has passed.
func TestCacheLagsBehindItsOwnCreate(t *testing.T) {
	for name, satisfy := range map[string]func(r testReconciler, server client.Client, pod string){
		"the expectation's bound passed": func(r testReconciler, _ client.Client, _ string) { r.clock.Step(createBound) },
		"an event showed the pod": func(r testReconciler, server client.Client, name string) {
			pod := &corev1.Pod{}
			if err := server.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: name}, pod); err != nil {
				t.Fatal(err)
			}
			r.expected.observe(pod, false)
		},
	} {
		t.Run(name, func(t *testing.T) {
			server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), builders.Group("a", "b").Named("g").Obj())
			var podReads atomic.Int32
			apiReader := interceptor.NewClient(server, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*corev1.Pod); ok {
						podReads.Add(1)
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			var hidden []string
			r := newTestReconciler(laggingCache(server, &hidden), apiReader)
			if _, err := r.reconcile(t, "g"); err != nil {
				t.Fatalf("the start: %v", err)
			}
			started := getGroup(t, server, "g").Status
			hidden = []string{started.CurrentRun.PodName}

			res, err := r.reconcile(t, "g")
			if err != nil || res != (ctrl.Result{RequeueAfter: cacheLagRetry}) || podReads.Load() != 0 {
				t.Fatalf("result %+v, error %v, %d pod reads; want a requeue after %v and no read", res, err, podReads.Load(), cacheLagRetry)
			}

			satisfy(r, server, started.CurrentRun.PodName)
			if _, err := r.reconcile(t, "g"); err != nil || podReads.Load() != 1 {
				t.Fatalf("error %v, %d pod reads; want the pod read from the API server once", err, podReads.Load())
			}
			if diff := cmp.Diff(started, getGroup(t, server, "g").Status); diff != "" {
				t.Errorf("status (-started +after): the run's pod was read, nothing changes:\n%s", diff)
			}
			if diff := cmp.Diff(hidden, podNames(listPods(t, server))); diff != "" {
				t.Errorf("pods (-want +got):\n%s", diff)
			}
		})
	}
}
