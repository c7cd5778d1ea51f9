package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// deletedGroup is a group with the history finalizer being deleted, whose item a succeeded.
func deletedGroup() *v1alpha1.OaatGroup {
	g := builders.Group("a").Named("g").Obj()
	g.Finalizers = []string{v1alpha1.FinalizerHistory}
	g.DeletionTimestamp = &metav1.Time{Time: builders.T0}
	g.Status.RunCount = 4
	g.Status.Items = []v1alpha1.ItemStatus{{Name: "a", LastStarted: builders.At(-time.Minute), LastSuccess: builders.At(-time.Minute)}}
	return g
}

func TestFirstPassAddsTheHistoryFinalizer(t *testing.T) {
	server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), builders.Group("a").Named("g").Obj())
	r := newTestReconciler(server, server)
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatal(err)
	}
	if g := getGroup(t, server, "g"); !controllerutil.ContainsFinalizer(g, v1alpha1.FinalizerHistory) || g.Status.CurrentRun == nil {
		t.Fatalf("finalizers %v, current run %v: want the finalizer added in the pass that started a run", g.Finalizers, g.Status.CurrentRun)
	}
}

func TestDeletedGroupLeavesItsHistory(t *testing.T) {
	server := newFakeClient(t, interceptor.Funcs{}, builders.Type().Obj(), deletedGroup())
	r := newTestReconciler(server, server)
	r.HistoryRetention = time.Hour
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatal(err)
	}
	if err := server.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: "g"}, &v1alpha1.OaatGroup{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the group is still there: %v", err)
	}
	record := &v1alpha1.OaatGroupHistory{}
	if err := server.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: "g"}, record); err != nil {
		t.Fatal(err)
	}
	success := builders.At(-time.Minute)
	want := v1alpha1.OaatGroupHistorySpec{GroupUID: "g-uid", OaatType: "sleeper", DeletedAt: *builders.At(0), ExpiresAt: *builders.At(time.Hour),
		RunCount: 4, Items: []v1alpha1.ItemHistory{{Name: "a", LastStarted: success, LastSuccess: success}}}
	if diff := cmp.Diff(want, record.Spec, builders.EquateTimes); diff != "" {
		t.Fatalf("record (-want +got):\n%s", diff)
	}
}

func TestDeletedGroupGoesWithoutHistoryWhenThereIsNowhereToKeepIt(t *testing.T) {
	gr := schema.GroupResource{Group: "oaat.io", Resource: "oaatgrouphistories"}
	terminating := apierrors.NewForbidden(gr, "g", errors.New("namespace ns is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	for name, refusal := range map[string]error{
		"namespace terminating": terminating,
		"CRD terminating":       apierrors.NewMethodNotSupported(gr, "create"),
		"CRD missing":           apierrors.NewNotFound(gr, ""),
	} {
		t.Run(name, func(t *testing.T) {
			server := newFakeClient(t, refusingHistory(refusal, ptr.To(true), nil), builders.Type().Obj(), deletedGroup())
			r := newTestReconciler(server, server)
			if _, err := r.reconcile(t, "g"); err != nil {
				t.Fatal(err)
			}
			if !gone(t, server, "g") {
				t.Fatal("the group is still there")
			}
		})
	}
}

func TestDeletedGroupWaitsWhileItsHistoryCannotBeWritten(t *testing.T) {
	server := newFakeClient(t, interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewServerTimeout(schema.GroupResource{Group: "oaat.io", Resource: "oaatgrouphistories"}, "create", 1)
		},
	}, builders.Type().Obj(), deletedGroup())
	r := newTestReconciler(server, server)
	if _, err := r.reconcile(t, "g"); err == nil {
		t.Fatal("no error")
	}
	if g := getGroup(t, server, "g"); !controllerutil.ContainsFinalizer(g, v1alpha1.FinalizerHistory) {
		t.Fatal("the finalizer went without the history written")
	}
}
