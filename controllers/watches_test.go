package controllers

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// What the group reconciler's watches enqueue: the group a pod's label or an on-demand run names,
// and the groups of the namespace that name an OaatType.
func TestWatchMappings(t *testing.T) {
	key := func(name string) []ctrl.Request {
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: testNamespace, Name: name}}}
	}
	pod := func(labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: testNamespace, Labels: labels}}
	}
	if diff := cmp.Diff(key("g"), podToGroup(context.Background(), pod(map[string]string{v1alpha1.LabelGroup: "g"}))); diff != "" {
		t.Errorf("pod of g (-want +got):\n%s", diff)
	}
	for name, labels := range map[string]map[string]string{"no label": nil, "empty label": {v1alpha1.LabelGroup: ""}} {
		if got := podToGroup(context.Background(), pod(labels)); len(got) != 0 {
			t.Errorf("pod with %s: %v, want none", name, got)
		}
	}
	if diff := cmp.Diff(key("g"), onDemandRunToGroup(context.Background(), testOnDemandRun("r", "g", v1alpha1.OaatRunStatus{}))); diff != "" {
		t.Errorf("request of g (-want +got):\n%s", diff)
	}

	other := builders.Group("a").Named("h").Obj()
	other.Spec.OaatType = "other"
	elsewhere := builders.Group("a").Named("g").Obj()
	elsewhere.Namespace = "other-ns"
	verifying := builders.Group("a").Named("v").Obj()
	verifying.Spec.OaatType = "other"
	verifying.Spec.Verify = &v1alpha1.Verify{OaatType: "sleeper"}
	groups := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(builders.Group("a").Named("g").Obj(), other, elsewhere, verifying).
		WithIndex(&v1alpha1.OaatGroup{}, oaatTypeIndex, oaatTypesOf).Build()
	r := &OaatGroupReconciler{Client: groups}
	if diff := cmp.Diff(append(key("g"), key("v")...), r.groupsNaming(oaatTypeIndex)(context.Background(), builders.Type().Obj())); diff != "" {
		t.Errorf("groups naming OaatType sleeper, as spec.oaatType or spec.verify.oaatType (-want +got):\n%s", diff)
	}
	failing := &OaatGroupReconciler{Client: newFakeClient(t, interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("cache not synced")
		},
	})}
	if got := failing.groupsNaming(oaatTypeIndex)(context.Background(), builders.Type().Obj()); len(got) != 0 {
		t.Errorf("groups %v from a list that failed", got)
	}
}
