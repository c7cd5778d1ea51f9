package history

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestTransient(t *testing.T) {
	gr := schema.GroupResource{Group: "oaat.io", Resource: "oaatgrouphistories"}
	gk := schema.GroupKind{Group: "oaat.io", Kind: "OaatGroupHistory"}
	webhook := func(code int32) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code,
			Message: `admission webhook "deny.example.com" denied the request: no`}}
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"internal error", apierrors.NewInternalError(errors.New("etcd")), true},
		{"service unavailable", apierrors.NewServiceUnavailable("down"), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "create", 1), true},
		{"gateway timeout", apierrors.NewTimeoutError("slow", 1), true},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), true},
		{"conflict", apierrors.NewConflict(gr, "g", errors.New("changed")), true},
		{"a webhook's 503", webhook(503), true},
		{"no API status (the connection)", fmt.Errorf("writing: %w", &net.OpError{Op: "dial", Err: errors.New("refused")}), true},
		{"forbidden (RBAC, quota, webhook)", apierrors.NewForbidden(gr, "g", errors.New("exceeded quota")), false},
		{"invalid (a ValidatingAdmissionPolicy's default)", apierrors.NewInvalid(gk, "g", field.ErrorList{field.Forbidden(field.NewPath("spec"), "no")}), false},
		{"bad request", apierrors.NewBadRequest("no"), false},
		{"a webhook's 418", webhook(418), false},
		{"wrapped forbidden", fmt.Errorf("writing OaatGroupHistory g: %w", apierrors.NewForbidden(gr, "g", errors.New("denied"))), false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient(%v) = %t, want %t", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestRefusalWaitOver(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	const wait = 15 * time.Minute
	for _, tc := range []struct {
		name      string
		since     time.Time
		now       time.Time
		wantOver  bool
		wantRetry time.Duration
	}{
		{"the first refusal starts the wait", time.Time{}, t0, false, RefusalRetry},
		{"within the wait: retried every RefusalRetry", t0, t0.Add(5 * time.Minute), false, RefusalRetry},
		{"near its end: retried at the end", t0, t0.Add(wait - 10*time.Second), false, 10 * time.Second},
		{"at its end", t0, t0.Add(wait), true, 0},
		{"long after (a manager down meanwhile)", t0, t0.Add(10 * time.Hour), true, 0},
		{"a start in the future (another clock) counts from now", t0.Add(time.Hour), t0, false, RefusalRetry},
	} {
		over, retry := RefusalWaitOver(tc.since, tc.now, wait)
		if over != tc.wantOver || retry != tc.wantRetry {
			t.Errorf("%s: RefusalWaitOver = (%t, %s), want (%t, %s)", tc.name, over, retry, tc.wantOver, tc.wantRetry)
		}
	}
}
