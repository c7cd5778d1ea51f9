package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// crdMessageLimit is the CRD's maxLength of a condition message, which the fake client does not
// check by itself.
const crdMessageLimit = 32768

var groupKind = schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: "OaatGroup"}

// refuseLongMessages refuses, as the API server does, a group status with a condition message over
// the CRD's limit.
func refuseLongMessages(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if g, ok := obj.(*v1alpha1.OaatGroup); ok {
		for i, cond := range g.Status.Conditions {
			if len(cond.Message) > crdMessageLimit {
				return apierrors.NewInvalid(groupKind, g.Name, field.ErrorList{field.TooLong(
					field.NewPath("status", "conditions").Index(i).Child("message"), "", crdMessageLimit)})
			}
		}
	}
	return c.SubResource(sub).Update(ctx, obj, opts...)
}

// One ConfigMap of a thousand over-long lines and three valid items: the items run, and
// ItemsValid says what was skipped in a message the API server accepts.
func TestHugeItemSourceDoesNotFreezeTheGroup(t *testing.T) {
	var lines []string
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf("%03d%s", i, strings.Repeat("x", 297)))
	}
	lines = append(lines, "a", "b", "c")
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "dirs", Namespace: testNamespace, Labels: map[string]string{"oaat.io/item-source": "true"}},
		Data:       map[string]string{"list": strings.Join(lines, "\n")},
	}
	group := builders.Group().Named("g").Obj()
	group.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "dirs", Key: "list"}}}
	server := newFakeClient(t, interceptor.Funcs{SubResourceUpdate: refuseLongMessages}, builders.Type().Obj(), group, cm)
	r := newTestReconciler(server, server)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Errorf("pass: %v", err)
	}
	if pods := listPods(t, server); len(pods) != 1 {
		t.Fatalf("pods %v: want the first item to run", podNames(pods))
	}
	g := getGroup(t, server, "g")
	if g.Status.ItemCount != 3 {
		t.Fatalf("itemCount %d, want 3", g.Status.ItemCount)
	}
	c := findCondition(g, v1alpha1.ConditionItemsValid)
	if c == nil || c.Status != metav1.ConditionFalse || len(c.Message) > 4096 || !strings.Contains(c.Message, "and 995 more") {
		t.Fatalf("ItemsValid = %+v", c)
	}
	for _, e := range drainEvents(r.recorder) {
		if len(e) > 1100 {
			t.Fatalf("an event of %d bytes: %.200s…", len(e), e)
		}
	}
}

// A status the API server refuses as invalid is reported in a short Ready condition and an event,
// once, and the group is looked at again after a wait, not in a tight loop.
func TestInvalidStatusIsReportedNotRetriedInALoop(t *testing.T) {
	writes := 0
	server := newFakeClient(t, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if g, ok := obj.(*v1alpha1.OaatGroup); ok {
				writes++
				if g.Status.ItemCount > 0 { // the planned status; the one written before has none
					return apierrors.NewInvalid(groupKind, g.Name, field.ErrorList{field.Invalid(
						field.NewPath("status", "items"), "", strings.Repeat("too long ", 600))})
				}
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}, builders.Type().Obj(), builders.Group("a").Named("g").Obj())
	r := newTestReconciler(server, server)

	res, err := r.reconcile(t, "g")
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	if res.RequeueAfter < planner.MinRetry {
		t.Fatalf("requeueAfter %v, want at least %v", res.RequeueAfter, planner.MinRetry)
	}
	g := getGroup(t, server, "g")
	ready := findCondition(g, v1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != string(v1alpha1.ReasonStatusRejected) || len(ready.Message) > 4096 {
		t.Fatalf("Ready = %+v", ready)
	}
	if pods := listPods(t, server); len(pods) != 0 {
		t.Fatalf("pods %v: nothing may start while the status cannot be written", podNames(pods))
	}
	events := drainEvents(r.recorder)
	if len(events) != 1 || !strings.Contains(events[0], string(v1alpha1.ReasonStatusRejected)) || len(events[0]) > 1100 {
		t.Fatalf("events %q", events)
	}

	// The next pass meets the same refusal: it writes nothing more and says nothing more.
	version := g.ResourceVersion
	r.clock.Step(time.Second)
	writes = 0
	res, err = r.reconcile(t, "g")
	if err != nil {
		t.Fatalf("second pass: %v", err)
	}
	if g := getGroup(t, server, "g"); g.ResourceVersion != version || writes != 1 {
		t.Fatalf("second pass: %d status writes, resourceVersion %s -> %s", writes, version, g.ResourceVersion)
	}
	if events := drainEvents(r.recorder); len(events) != 0 || res.RequeueAfter < planner.MinRetry {
		t.Fatalf("second pass: events %q, requeueAfter %v", events, res.RequeueAfter)
	}
}
