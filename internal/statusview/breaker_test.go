package statusview

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestBreaker(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ts := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }
	open := &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen, FailedItems: []string{"a", "/srv/photos", "c"},
		OpenedAt: ts(-5 * time.Minute), LastFailureReason: "Error", LastFailureExitCode: ptr.To[int32](75),
		NextProbeAt: ts(3 * time.Minute), FailedProbes: 2}
	for _, tc := range []struct {
		name    string
		status  *v1alpha1.CircuitBreakerStatus
		current *v1alpha1.CurrentRun
		// noSpec makes the group one without spec.circuitBreaker, following a lock's breaker.
		noSpec bool
		want   string
	}{
		{name: "without a breaker", want: ""},
		{name: "closed", status: &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed, FailedItems: []string{"a"}},
			want: "closed, 1 of 3 items failed in a row"},
		{name: "open, waiting for the next probe", status: open,
			want: `OPEN 5m ago after 3 items failed in a row (a, /srv/photos, c), last failure Error (exit 75); failed probes: 2; next probe in 3m`},
		{name: "open, a probe running", status: open, current: &v1alpha1.CurrentRun{Item: "c"},
			want: `OPEN 5m ago after 3 items failed in a row (a, /srv/photos, c), last failure Error (exit 75); failed probes: 2; probe running: c`},
		{name: "open with the breaker of a lock, without spec.circuitBreaker", noSpec: true,
			status: &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen, OpenedAt: ts(-time.Minute), LastFailureReason: "Error",
				LastFailureExitCode: ptr.To[int32](75), NextProbeAt: ts(30 * time.Second)},
			want: `OPEN 60s ago with the breaker of a lock it names, last failure Error (exit 75); failed probes: 0; next probe in 30s`},
		{name: "closed, without spec.circuitBreaker: the default threshold", noSpec: true,
			status: &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed}, want: "closed, 0 of 3 items failed in a row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &v1alpha1.OaatGroup{
				Spec:   v1alpha1.OaatGroupSpec{CircuitBreaker: &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 3}},
				Status: v1alpha1.OaatGroupStatus{CircuitBreaker: tc.status, CurrentRun: tc.current},
			}
			if tc.noSpec {
				g.Spec.CircuitBreaker = nil
			}
			if diff := cmp.Diff(tc.want, Breaker(g, now)); diff != "" {
				t.Errorf("Breaker (-want +got):\n%s", diff)
			}
		})
	}
}

// The table of a group whose breaker is open has the breaker's line under its heading, and the
// heading says it.
func TestWriteOpenBreaker(t *testing.T) {
	now, ts := builders.T0, builders.At
	g := builders.Group("a", "b").Namespace("demo").Condition(ready).ItemStatus(
		v1alpha1.ItemStatus{Name: "a", FailureCount: 1, LastFailure: ts(-2 * time.Minute), LastExitCode: ptr.To[int32](1), LastReason: "Error",
			NextEligibleAt: ts(time.Minute), WaitReason: v1alpha1.WaitBreakerOpen},
		v1alpha1.ItemStatus{Name: "b", FailureCount: 1, LastFailure: ts(-time.Minute), LastExitCode: ptr.To[int32](1), LastReason: "Error",
			NextEligibleAt: ts(time.Minute), WaitReason: v1alpha1.WaitBreakerOpen}).Obj()
	g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 2}
	g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerOpen, FailedItems: []string{"a", "b"}, OpenedAt: ts(-time.Minute),
		LastFailureReason: "Error", LastFailureExitCode: ptr.To[int32](1), NextProbeAt: ts(time.Minute)}
	var b strings.Builder
	if err := Write(&b, g, nil, now); err != nil {
		t.Fatal(err)
	}
	want := `demo/backups  type=sleeper  frequency=1h  failureCoolOff=none  ready=True  circuitBreaker=Open  running=none
  circuit breaker: OPEN 60s ago after 2 items failed in a row (a, b), last failure Error (exit 1); failed probes: 0; next probe in 60s
  ITEM  RUNNING  LAST SUCCESS  LAST FAILURE  FAILURES  LAST RESULT     NEXT
  a              never         2m ago        1         Error (exit 1)  in 60s (BreakerOpen)
  b              never         60s ago       1         Error (exit 1)  in 60s (BreakerOpen)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}
