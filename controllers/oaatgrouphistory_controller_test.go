package controllers

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// TestHistoryRecordGoesAtItsExpiry: a record is looked at again exactly at its expiry, and deleted
// then.
func TestHistoryRecordGoesAtItsExpiry(t *testing.T) {
	record := &v1alpha1.OaatGroupHistory{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "g"},
		Spec: v1alpha1.OaatGroupHistorySpec{GroupUID: "g-uid", OaatType: "sleeper",
			DeletedAt: metav1.NewTime(builders.T0), ExpiresAt: metav1.NewTime(builders.T0.Add(time.Hour))},
	}
	server := newFakeClient(t, interceptor.Funcs{}, record)
	clock := clocktesting.NewFakeClock(builders.T0.Add(20 * time.Minute))
	r := &OaatGroupHistoryReconciler{Client: server, Clock: clock}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(record)}

	res, err := r.Reconcile(context.Background(), req)
	if err != nil || res.RequeueAfter != 40*time.Minute {
		t.Fatalf("before its expiry: %+v, %v; want a look again in 40m", res, err)
	}
	clock.SetTime(builders.T0.Add(time.Hour))
	if res, err := r.Reconcile(context.Background(), req); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("at its expiry: %+v, %v", res, err)
	}
	if err := server.Get(context.Background(), req.NamespacedName, &v1alpha1.OaatGroupHistory{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the expired record is still there: %v", err)
	}
	if res, err := r.Reconcile(context.Background(), req); err != nil || res.RequeueAfter != 0 {
		t.Fatalf("once gone: %+v, %v", res, err)
	}
}
