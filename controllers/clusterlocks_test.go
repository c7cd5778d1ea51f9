package controllers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
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

// A run takes an OaatLock and a ClusterOaatLock together or neither: when the cluster lock (taken
// first, its key sorts first) cannot be written, the OaatLock is not taken and nothing runs; once
// it can, both name the run, the cluster lock with the group's namespace.
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

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass: %v", err)
	}
	if h := getLock(t, server, "nas").Status.Holders; len(h) != 0 {
		t.Errorf("nas holders %+v although db could not be taken", h)
	}
	if pods := listPods(t, server); len(pods) != 0 {
		t.Fatalf("pods %v created without the locks", podNames(pods))
	}

	refuse = false
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("second pass: %v", err)
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
}

// A group whose namespace the ClusterOaatLock does not select takes nothing and is not Ready.
func TestClusterLockNotPermitted(t *testing.T) {
	group := builders.Group("a").Named("g").Obj()
	group.Spec.ClusterLocks = []string{"db"}
	server := newFakeClient(t, conflictOn(func(client.Object) bool { return false }),
		builders.Type().Obj(), group, builders.ClusterLock("db", 1), testNamespaceObject(map[string]string{"team": "web"}))
	r := newTestReconciler(server, server)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("pass: %v", err)
	}
	if pods := listPods(t, server); len(pods) != 0 {
		t.Fatalf("pods %v created in a namespace the lock does not select", podNames(pods))
	}
	if h := getClusterLock(t, server, "db").Status.Holders; len(h) != 0 {
		t.Errorf("db holders %+v", h)
	}
	c := meta.FindStatusCondition(getGroup(t, server, "g").Status.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonLockNotPermitted) {
		t.Errorf("Ready = %+v, want False with reason %s", c, v1alpha1.ReasonLockNotPermitted)
	}
}
