package statusview

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestWriteScheduledGroup(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	next := metav1.NewTime(time.Date(2026, 11, 22, 0, 3, 7, 0, time.UTC))
	done := metav1.NewTime(now.Add(-11 * time.Hour))
	g := &v1alpha1.OaatGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "demo"},
		Spec: v1alpha1.OaatGroupSpec{
			OaatType: "sleeper", OaatItems: []string{"a", "b"}, Schedule: "0 1 * * *", ScheduleTimeZone: "Europe/Berlin", Jitter: "5m",
		},
		Status: v1alpha1.OaatGroupStatus{
			Conditions: []metav1.Condition{
				{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady},
				{Type: v1alpha1.ConditionRoundOverrun, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRoundOverrun},
			},
			NextRoundAt: &next,
			Items: []v1alpha1.ItemStatus{
				{Name: "a", LastSuccess: &done, NextEligibleAt: &next, WaitReason: v1alpha1.WaitNextTick},
				{Name: "b", LastFailure: &done, FailureCount: 1},
			},
		},
	}
	var b strings.Builder
	if err := Write(&b, g, nil, now); err != nil {
		t.Fatal(err)
	}
	want := `demo/nightly  type=sleeper  schedule="0 1 * * *"  timeZone=Europe/Berlin  jitter=5m  nextRound=in 12h (2026-11-22T00:03:07Z)  failureCoolOff=none  ready=True  roundoverrun (RoundOverrun)  running=none
  ITEM  RUNNING  LAST SUCCESS  LAST FAILURE  FAILURES  LAST RESULT  NEXT
  a              11h ago       never         0                      in 12h (NextTick)
  b              never         11h ago       1                      now
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTimingDefaults(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	if got := timing(&v1alpha1.OaatGroup{}, now); got != "frequency=1h" {
		t.Fatalf("timing() without frequency = %q", got)
	}
	g := &v1alpha1.OaatGroup{Spec: v1alpha1.OaatGroupSpec{Schedule: "@daily"}}
	if got := timing(g, now); got != `schedule="@daily"  timeZone=UTC` {
		t.Fatalf("timing() of a schedule before its first status = %q", got)
	}
}
