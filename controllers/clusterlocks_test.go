package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func testNamespaceObject(labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace, Labels: labels}}
}

func getClusterLock(t *testing.T, c client.Reader, name string) *v1alpha1.ClusterOaatLock {
	t.Helper()
	l := &v1alpha1.ClusterOaatLock{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, l); err != nil {
		t.Fatalf("reading ClusterOaatLock %s: %v", name, err)
	}
	return l
}

// A run starts once an OaatLock and a ClusterOaatLock both list its request, not on the grant of
// one of them: while the cluster lock's write meets a conflict (it grants nothing), the group waits
// for it, and no pod is created; once it can write, both name the run, the cluster lock with the
// group's namespace.
func TestMixedLocksAllOrNone(t *testing.T) {
	group := builders.Group("a").Named("g").Obj()
	group.Spec.Locks = []string{"nas"}
	group.Spec.ClusterLocks = []string{"db"}
	refuse := true
	server := newFakeClient(t, conflictOn(func(obj client.Object) bool {
		_, cluster := obj.(*v1alpha1.ClusterOaatLock)
		return cluster && refuse
	}), builders.Type().Obj(), group, builders.Lock("nas", 1), builders.ClusterLock("db", 1), testNamespaceObject(map[string]string{"team": "backup"}))
	r := newTestReconciler(server, server)
	namespaced, _ := newLockReconciler(server, r.clock, false)
	clusterLocks, _ := newLockReconciler(server, r.clock, true)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass: %v", err)
	}
	reviewLock(t, namespaced, "nas")
	if res := reviewLock(t, clusterLocks, "db"); res.RequeueAfter != conflictRetry {
		t.Errorf("db's pass met a conflict: %+v, want a retry after %v", res, conflictRetry)
	}
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("second pass: %v", err)
	}
	w := getGroup(t, server, "g").Status.LockWait
	if w == nil || !slices.Equal(w.Locks, []string{"ClusterOaatLock/db"}) {
		t.Fatalf("lockWait %+v, want a wait for ClusterOaatLock/db alone (nas listed the request)", w)
	}
	if pods := listPods(t, server); len(pods) != 0 {
		t.Fatalf("pods %v created on nas's grant alone", podNames(pods))
	}

	refuse = false
	reviewLock(t, clusterLocks, "db")
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("third pass: %v", err)
	}
	pods := listPods(t, server)
	nas, db := getLock(t, server, "nas").Status.Holders, getClusterLock(t, server, "db").Status.Holders
	if len(pods) != 1 || len(nas) != 1 || len(db) != 1 || nas[0].Pod != pods[0].Name || db[0].Pod != pods[0].Name {
		t.Fatalf("pods %v, nas holders %+v, db holders %+v: want the run's pod to hold both", podNames(pods), nas, db)
	}
	if nas[0].Namespace != "" || db[0].Namespace != testNamespace {
		t.Errorf("holder namespaces: nas %q, db %q; want none for the OaatLock, %q for the ClusterOaatLock",
			nas[0].Namespace, db[0].Namespace, testNamespace)
	}
	if g := getGroup(t, server, "g"); g.Status.LockWait != nil || g.Status.CurrentRun == nil || g.Status.CurrentRun.PodName != pods[0].Name {
		t.Errorf("lockWait %+v, currentRun %+v; want the run started and no request left", g.Status.LockWait, g.Status.CurrentRun)
	}
}

// A group whose namespace the ClusterOaatLock does not select asks nothing, is granted nothing and
// is not Ready.
func TestClusterLockNotPermitted(t *testing.T) {
	group := builders.Group("a").Named("g").Obj()
	group.Spec.ClusterLocks = []string{"db"}
	server := newFakeClient(t, interceptor.Funcs{},
		builders.Type().Obj(), group, builders.ClusterLock("db", 1), testNamespaceObject(map[string]string{"team": "web"}))
	r := newTestReconciler(server, server)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass: %v", err)
	}
	clusterLocks, _ := newLockReconciler(server, r.clock, true)
	reviewLock(t, clusterLocks, "db")
	if pods := listPods(t, server); len(pods) != 0 {
		t.Fatalf("pods %v created in a namespace the lock does not select", podNames(pods))
	}
	if h := getClusterLock(t, server, "db").Status.Holders; len(h) != 0 {
		t.Errorf("db holders %+v", h)
	}
	g := getGroup(t, server, "g")
	if g.Status.LockWait != nil {
		t.Errorf("lockWait %+v, want no request", g.Status.LockWait)
	}
	c := meta.FindStatusCondition(g.Status.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonLockNotPermitted) {
		t.Errorf("Ready = %+v, want False with reason %s", c, v1alpha1.ReasonLockNotPermitted)
	}
}

// clusterRequesting is group name of namespace ns naming the ClusterOaatLock db, whose request
// since the time given asks for the run of item a in pod name-a-1.
func clusterRequesting(name string, since time.Duration) *v1alpha1.OaatGroup {
	g := builders.Group("a").Named(name).ClusterLocks("db").Obj()
	g.Status.LockWait = &v1alpha1.LockWait{Since: *builders.At(since), Locks: []string{"ClusterOaatLock/db"}, Item: "a", Pod: name + "-a-1"}
	return g
}

// An installation that watches only some namespaces writes its own entry of a ClusterOaatLock's
// waiting (how many of its groups wait, since when the longest has), renewed while they wait, and
// counts the others' entries that still count like waiters before its own: a freed slot goes to
// the group that has waited longest, whichever installation runs it. An entry not renewed for
// WaitingExpiry counts no more and is removed with the next write of its own.
func TestClusterLockInstallationsWaiting(t *testing.T) {
	entry := func(installation string, waiting int32, since, renewed time.Duration) v1alpha1.InstallationWaiting {
		return v1alpha1.InstallationWaiting{Installation: installation, Waiting: waiting, Since: *builders.At(since), RenewedAt: *builders.At(renewed)}
	}
	for _, tc := range []struct {
		name        string
		other       v1alpha1.InstallationWaiting
		wantHolders []string
		wantEntries []v1alpha1.InstallationWaiting
	}{
		{name: "another installation's group waited longer: the slot is kept for it",
			other:       entry("aaa", 1, -time.Hour, -time.Minute),
			wantEntries: []v1alpha1.InstallationWaiting{entry("aaa", 1, -time.Hour, -time.Minute), entry(testNamespace, 2, -time.Minute, 0)}},
		{name: "another installation's group waits since later: the earliest of ours is granted",
			other:       entry("aaa", 1, 0, -time.Minute),
			wantHolders: []string{"g-a-1"},
			wantEntries: []v1alpha1.InstallationWaiting{entry("aaa", 1, 0, -time.Minute), entry(testNamespace, 2, -time.Minute, 0)}},
		{name: "another installation's entry expired: it counts no more, and is removed",
			other:       entry("aaa", 1, -time.Hour, -3*time.Minute),
			wantHolders: []string{"g-a-1"},
			wantEntries: []v1alpha1.InstallationWaiting{entry(testNamespace, 2, -time.Minute, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lock := builders.ClusterLock("db", 1)
			lock.CreationTimestamp = *builders.At(-time.Hour)
			lock.Status.InstallationsWaiting = []v1alpha1.InstallationWaiting{tc.other}
			c := newFakeClient(t, interceptor.Funcs{}, lock, clusterRequesting("g", -time.Minute), clusterRequesting("h", -30*time.Second))
			lr, _ := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), true)
			lr.Namespaces, lr.Installation, lr.AdoptionWindow = []string{testNamespace}, testNamespace, time.Minute
			if res := reviewLock(t, lr, "db"); res.RequeueAfter != locks.WaitingRenewal/2 {
				t.Errorf("result %+v, want a look again after %v to renew the entry", res, locks.WaitingRenewal/2)
			}
			got := getClusterLock(t, c, "db").Status
			if pods := holderPods(getClusterLock(t, c, "db")); !slices.Equal(pods, tc.wantHolders) {
				t.Errorf("holders %v, want %v", pods, tc.wantHolders)
			}
			if diff := cmp.Diff(tc.wantEntries, got.InstallationsWaiting, builders.EquateTimes); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if got.WaitingGroups != 0 {
				t.Errorf("waitingGroups %d written by an installation of some namespaces", got.WaitingGroups)
			}
		})
	}
}

// A ClusterOaatLock grants nothing to the groups of an installation of some namespaces within its
// adoption window after its creation (the other installations' live runs may be missing from it):
// the lock is looked at again when the window ends, and then grants.
func TestClusterLockAdoptionWindow(t *testing.T) {
	lock := builders.ClusterLock("db", 1)
	lock.CreationTimestamp = *builders.At(-10 * time.Second)
	c := newFakeClient(t, interceptor.Funcs{}, lock, clusterRequesting("g", -time.Minute))
	clock := clocktesting.NewFakeClock(builders.T0)
	lr, _ := newLockReconciler(c, clock, true)
	lr.Namespaces, lr.Installation, lr.AdoptionWindow = []string{testNamespace}, testNamespace, 20*time.Second
	if res := reviewLock(t, lr, "db"); res.RequeueAfter != 10*time.Second {
		t.Errorf("within the window: %+v, want a look again when it ends, in 10s", res)
	}
	if got := holderPods(getClusterLock(t, c, "db")); len(got) != 0 {
		t.Fatalf("holders %v within the adoption window", got)
	}
	clock.Step(10 * time.Second)
	reviewLock(t, lr, "db")
	if got := holderPods(getClusterLock(t, c, "db")); !slices.Equal(got, []string{"g-a-1"}) {
		t.Fatalf("holders %v once the window ended, want g's request", got)
	}

	// An installation of all namespaces adopts at once.
	fresh := builders.ClusterLock("db", 1)
	fresh.CreationTimestamp = *builders.At(0)
	c = newFakeClient(t, interceptor.Funcs{}, fresh, clusterRequesting("g", -time.Minute))
	all, _ := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), true)
	all.AdoptionWindow = time.Minute
	reviewLock(t, all, "db")
	if got := holderPods(getClusterLock(t, c, "db")); !slices.Equal(got, []string{"g-a-1"}) {
		t.Fatalf("an installation of all namespaces: holders %v, want g's request at once", got)
	}
}

// The holders of a ClusterOaatLock of groups another installation serves (a namespace this one
// does not watch, or one whose groups it may not read) stay as they are, and take their slots:
// this installation decides only its own groups' holders.
func TestClusterLockForeignHoldersUntouched(t *testing.T) {
	foreign := func(namespace, group string) v1alpha1.LockHolder {
		return v1alpha1.LockHolder{Namespace: namespace, Group: group, GroupUID: group + "-uid", Item: "x", Pod: group + "-x-1", Since: *builders.At(-time.Hour)}
	}
	elsewhere, forbidden := foreign("elsewhere", "theirs"), foreign(testNamespace, "hidden")
	mineGone := foreign(testNamespace, "gone")
	t.Run("a namespace not watched", func(t *testing.T) {
		lock := builders.ClusterLock("db", 2, elsewhere, mineGone)
		c := newFakeClient(t, interceptor.Funcs{}, lock, clusterRequesting("g", -time.Minute), clusterRequesting("h", 0))
		lr, _ := newLockReconciler(c, clocktesting.NewFakeClock(builders.T0), true)
		lr.Namespaces, lr.Installation = []string{testNamespace}, testNamespace
		reviewLock(t, lr, "db")
		want := []v1alpha1.LockHolder{
			{Namespace: testNamespace, Group: "g", GroupUID: "g-uid", Item: "a", Pod: "g-a-1", Since: *builders.At(0)},
			elsewhere,
		}
		if diff := cmp.Diff(want, getClusterLock(t, c, "db").Status.Holders, builders.EquateTimes); diff != "" {
			t.Errorf("holders (-want +got):\n%s", diff)
		}
	})
	t.Run("a group this installation may not read", func(t *testing.T) {
		lock := builders.ClusterLock("db", 1, forbidden)
		objs := []client.Object{lock, clusterRequesting("g", -time.Minute)}
		cache := newFakeClient(t, interceptor.Funcs{}, objs...)
		apiServer := newFakeClient(t, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*v1alpha1.OaatGroup); ok && key.Name == "hidden" {
				return apierrors.NewForbidden(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "oaatgroups"}, key.Name, nil)
			}
			return c.Get(ctx, key, obj, opts...)
		}}, objs...)
		lr, _ := newLockReconciler(cache, clocktesting.NewFakeClock(builders.T0), true)
		lr.APIReader = apiServer
		reviewLock(t, lr, "db")
		if diff := cmp.Diff([]v1alpha1.LockHolder{forbidden}, getClusterLock(t, cache, "db").Status.Holders, builders.EquateTimes); diff != "" {
			t.Errorf("holders (-want +got):\n%s", diff)
		}
	})
}
