package controllers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// refusingHistory makes the API server refuse every OaatGroupHistory with refusal while *refuse
// holds, and answer every SelfSubjectAccessReview about them with *allowed; with allowed nil, the
// reviews are the fake server's, which allows nothing.
func refusingHistory(refusal error, refuse, allowed *bool) interceptor.Funcs {
	return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		switch o := obj.(type) {
		case *v1alpha1.OaatGroupHistory:
			if *refuse {
				return refusal
			}
		case *authorizationv1.SelfSubjectAccessReview:
			if allowed == nil {
				break
			}
			if a := o.Spec.ResourceAttributes; a == nil || a.Resource != "oaatgrouphistories" || a.Verb != "create" || a.Namespace != testNamespace {
				return errors.New("unexpected access review")
			}
			o.Status.Allowed = *allowed
			return nil
		}
		return c.Create(ctx, obj, opts...)
	}}
}

// expectHistoryLost checks that the group's pass emitted one Warning HistoryLost event whose note
// says says, and counted one loss for reason.
func expectHistoryLost(t *testing.T, r testReconciler, reason, says string) {
	t.Helper()
	events := drainEvents(r.recorder)
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning "+string(v1alpha1.ReasonHistoryLost)) || !strings.Contains(events[0], says) {
		t.Fatalf("events %v, want one Warning %s saying %q", events, v1alpha1.ReasonHistoryLost, says)
	}
	if n := lostCount(t, r, testNamespace, reason); n != 1 {
		t.Fatalf("oaat_group_histories_lost_total{reason=%q} = %v, want 1", reason, n)
	}
}

var historyResource = schema.GroupResource{Group: "oaat.io", Resource: "oaatgrouphistories"}

// gone reports whether the group is gone from the server.
func gone(t *testing.T, c client.Reader, name string) bool {
	t.Helper()
	err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: name}, &v1alpha1.OaatGroup{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

// A refusal by admission (an exhausted quota, a webhook, a ValidatingAdmissionPolicy's 422) is
// tried again for the wait, whose start the condition HistoryKept keeps; then the group goes
// without its record, with a Warning event and the metric.
func TestRefusedHistoryIsWaitedOutThenLost(t *testing.T) {
	for name, refusal := range map[string]error{
		"quota exceeded (403)": apierrors.NewForbidden(historyResource, "g", errors.New("exceeded quota: h, requested: count/oaatgrouphistories.oaat.io=1, used: 0, limited: 0")),
		"policy denies (422)": apierrors.NewInvalid(schema.GroupKind{Group: "oaat.io", Kind: "OaatGroupHistory"}, "g",
			field.ErrorList{field.Forbidden(field.NewPath(""), "ValidatingAdmissionPolicy 'no-history' denied request")}),
	} {
		t.Run(name, func(t *testing.T) {
			refuse := true
			server := newFakeClient(t, refusingHistory(refusal, &refuse, ptr.To(true)), builders.Type().Obj(), deletedGroup())
			r := newTestReconciler(server, server)
			r.HistoryRefusalWait = 15 * time.Minute

			res, err := r.reconcile(t, "g")
			if err != nil || res.RequeueAfter != history.RefusalRetry {
				t.Fatalf("first refusal: (%v, %v), want a retry after %s", res, err, history.RefusalRetry)
			}
			c := meta.FindStatusCondition(getGroup(t, server, "g").Status.Conditions, v1alpha1.ConditionHistoryKept)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonHistoryRefused) || !c.LastTransitionTime.Time.Equal(builders.T0) ||
				!strings.Contains(c.Message, refusal.Error()) || !strings.Contains(c.Message, "2026") {
				t.Fatalf("condition %+v: want HistoryKept False, HistoryRefused since T0, the refusal and the deadline in its message", c)
			}
			r.clock.Step(14*time.Minute + 50*time.Second)
			if res, err = r.reconcile(t, "g"); err != nil || res.RequeueAfter != 10*time.Second || gone(t, server, "g") {
				t.Fatalf("10 s before the wait's end: (%v, %v), gone %t; want a retry at the end, the group kept", res, err, gone(t, server, "g"))
			}
			if since := meta.FindStatusCondition(getGroup(t, server, "g").Status.Conditions, v1alpha1.ConditionHistoryKept).LastTransitionTime; !since.Time.Equal(builders.T0) {
				t.Fatalf("the wait's start moved to %s", since)
			}
			if events := drainEvents(r.recorder); len(events) != 0 {
				t.Fatalf("events during the wait: %v", events)
			}
			r.clock.Step(10 * time.Second)
			if res, err = r.reconcile(t, "g"); err != nil || res.RequeueAfter != 0 || !gone(t, server, "g") {
				t.Fatalf("at the wait's end: (%v, %v), gone %t; want the group gone", res, err, gone(t, server, "g"))
			}
			expectHistoryLost(t, r, history.LostRefused, "refused it for 15m0s")
		})
	}
}

// The wait's start is the cluster's, not the process's: a manager that starts during the wait
// (a restart, a failover) goes on with it.
func TestRefusedHistoryWaitSurvivesARestart(t *testing.T) {
	refuse := true
	g := deletedGroup()
	g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionHistoryKept, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonHistoryRefused),
		Message: "refused", LastTransitionTime: metav1.NewTime(builders.T0.Add(-14 * time.Minute))}}
	refusal := apierrors.NewForbidden(historyResource, "g", errors.New("exceeded quota"))
	server := newFakeClient(t, refusingHistory(refusal, &refuse, ptr.To(true)), builders.Type().Obj(), g)
	r := newTestReconciler(server, server)
	r.HistoryRefusalWait = 15 * time.Minute
	if res, err := r.reconcile(t, "g"); err != nil || res.RequeueAfter != history.RefusalRetry || gone(t, server, "g") {
		t.Fatalf("a minute before the stored wait's end: (%v, %v), gone %t", res, err, gone(t, server, "g"))
	}
	r.clock.Step(time.Minute)
	if _, err := r.reconcile(t, "g"); err != nil || !gone(t, server, "g") {
		t.Fatalf("at the stored wait's end: %v, gone %t; the new process started the wait again", err, gone(t, server, "g"))
	}
}

// A refusal that ends within the wait keeps the history: nothing is lost.
func TestRefusedHistoryKeptWhenTheRefusalEnds(t *testing.T) {
	refuse := true
	refusal := apierrors.NewForbidden(historyResource, "g", errors.New(`admission webhook "deny.example.com" denied the request`))
	server := newFakeClient(t, refusingHistory(refusal, &refuse, ptr.To(true)), builders.Type().Obj(), deletedGroup())
	r := newTestReconciler(server, server)
	if _, err := r.reconcile(t, "g"); err != nil || gone(t, server, "g") {
		t.Fatalf("first refusal: %v, gone %t", err, gone(t, server, "g"))
	}
	refuse = false
	r.clock.Step(history.RefusalRetry)
	if _, err := r.reconcile(t, "g"); err != nil || !gone(t, server, "g") {
		t.Fatalf("once accepted: %v, gone %t", err, gone(t, server, "g"))
	}
	if err := server.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: "g"}, &v1alpha1.OaatGroupHistory{}); err != nil {
		t.Fatalf("the record: %v", err)
	}
	if events := drainEvents(r.recorder); len(events) != 0 {
		t.Fatalf("events %v, want none: nothing was lost", events)
	}
}

// A refusal that the operator's own rights explain does not wait: no retry gives it a right.
func TestHistoryForbiddenByTheOperatorsRightsGoesAtOnce(t *testing.T) {
	refuse := true
	refusal := apierrors.NewForbidden(historyResource, "g", errors.New(`User "system:serviceaccount:oaat:m" cannot create resource "oaatgrouphistories"`))
	server := newFakeClient(t, refusingHistory(refusal, &refuse, ptr.To(false)), builders.Type().Obj(), deletedGroup())
	r := newTestReconciler(server, server)
	if _, err := r.reconcile(t, "g"); err != nil || !gone(t, server, "g") {
		t.Fatalf("first pass: %v, gone %t; want the group gone at once", err, gone(t, server, "g"))
	}
	expectHistoryLost(t, r, history.LostUnauthorized, "may not create OaatGroupHistories")
}

// A transient error never starts the wait: it is retried as every write is.
func TestTransientHistoryErrorStartsNoWait(t *testing.T) {
	refuse := true
	server := newFakeClient(t, refusingHistory(apierrors.NewTooManyRequests("slow down", 1), &refuse, ptr.To(true)), builders.Type().Obj(), deletedGroup())
	r := newTestReconciler(server, server)
	for range 3 {
		if _, err := r.reconcile(t, "g"); err == nil {
			t.Fatal("no error for a transient refusal")
		}
		r.clock.Step(time.Hour)
	}
	g := getGroup(t, server, "g")
	if !controllerutil.ContainsFinalizer(g, v1alpha1.FinalizerHistory) || meta.FindStatusCondition(g.Status.Conditions, v1alpha1.ConditionHistoryKept) != nil {
		t.Fatalf("finalizers %v, conditions %+v: want the finalizer kept and no wait started", g.Finalizers, g.Status.Conditions)
	}
}

// lostCount is the value of oaat_group_histories_lost_total{namespace, reason} of the
// reconciler's metrics, as Prometheus would gather it.
func lostCount(t *testing.T, r testReconciler, namespace, reason string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, r.Runs, metrics.NewStatusCollector(r.Client, r.clock)); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "oaat_group_histories_lost_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == namespace && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
