package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/duepriority"
	"github.com/oaat-io/oaat-operator/internal/history"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The fixtures of the reconciler's unit tests: a fake client (with interceptors to inject the API
// server's failures) stands in for the API server at the controllers' I/O edge only.

const testNamespace = "ns"

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// newFakeClient is a fake API server holding objs, with the status subresources and the index the
// reconcilers use, whose calls go through funcs.
func newFakeClient(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) client.WithWatch {
	t.Helper()
	return fake.NewClientBuilder().
		WithScheme(testScheme(t)).
		WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.OaatGroup{}, &v1alpha1.OaatRun{}, &v1alpha1.OaatLock{}, &v1alpha1.ClusterOaatLock{}, &corev1.Pod{}).
		WithIndex(&v1alpha1.OaatGroup{}, lockIndex, namedLocks).
		WithIndex(&v1alpha1.OaatGroup{}, clusterLockIndex, namedClusterLocks).
		WithIndex(&v1alpha1.OaatLock{}, lockHolderIndex, holderGroups).
		WithIndex(&v1alpha1.ClusterOaatLock{}, clusterLockHolderIndex, holderGroups).
		WithIndex(&corev1.Pod{}, podGroupIndex, podGroup).
		WithIndex(&v1alpha1.OaatRun{}, oaatGroupIndex, func(obj client.Object) []string {
			return []string{obj.(*v1alpha1.OaatRun).Spec.OaatGroup}
		}).
		WithInterceptorFuncs(funcs).
		Build()
}

// testReconciler is a group reconciler whose cache is c and whose direct reads go to apiReader.
type testReconciler struct {
	*OaatGroupReconciler
	clock    *clocktesting.FakeClock
	recorder *events.FakeRecorder
}

func newTestReconciler(c client.Client, apiReader client.Reader) testReconciler {
	clock := clocktesting.NewFakeClock(builders.T0)
	recorder := events.NewFakeRecorder(100)
	runs := metrics.NewRunMetrics()
	// As Setup defaults it.
	r := &OaatGroupReconciler{Client: noLockWrites{c}, APIReader: apiReader, Recorder: recorder, Clock: clock, Seed: 1, Runs: runs,
		HistoryRefusalWait: history.DefaultRefusalWait}
	r.onDemandRuns = onDemandRunWriter{client: c, recorder: recorder, runs: runs}
	r.forecasts = newForecaster()
	r.notifier = newNotifier(clock, NotifyOptions{})
	return testReconciler{OaatGroupReconciler: r, clock: clock, recorder: recorder}
}

// reconcile runs one pass over the group.
// reconcile reconciles the group once. A requeue must come with the priority of a group due now
// (wakeUpPriority), which is checked here and left out of the result the tests compare.
func (r testReconciler) reconcile(t *testing.T, group string) (ctrl.Result, error) {
	t.Helper()
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNamespace, Name: group}})
	switch {
	case res.RequeueAfter > 0 && (res.Priority == nil || *res.Priority != duepriority.Due(0)):
		t.Errorf("a requeue after %s has priority %v, want %d (due now)", res.RequeueAfter, res.Priority, duepriority.Due(0))
	case res.RequeueAfter == 0 && res.Priority != nil:
		t.Errorf("a result without a requeue has priority %d", *res.Priority)
	}
	res.Priority = nil
	return res, err
}

func getGroup(t *testing.T, c client.Reader, name string) *v1alpha1.OaatGroup {
	t.Helper()
	g := &v1alpha1.OaatGroup{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: name}, g); err != nil {
		t.Fatalf("reading group %s: %v", name, err)
	}
	return g
}

func listPods(t *testing.T, c client.Reader) []corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods, client.InNamespace(testNamespace)); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	return pods.Items
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}

// finishPod plays the kubelet: the pod's main container exited with code.
func finishPod(t *testing.T, c client.Client, name string, code int32, at time.Time) {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: name}, pod); err != nil {
		t.Fatalf("reading pod %s: %v", name, err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	reason := "Completed"
	if code != 0 {
		pod.Status.Phase, reason = corev1.PodFailed, "Error"
	}
	start := metav1.NewTime(at.Add(-10 * time.Second))
	pod.Status.StartTime = &start
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: start, FinishedAt: metav1.NewTime(at)},
	}}}
	if err := c.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("finishing pod %s: %v", name, err)
	}
}

// drainEvents returns the events recorded so far, as "Type Reason note".
func drainEvents(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}
