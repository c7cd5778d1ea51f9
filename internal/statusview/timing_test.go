package statusview

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestWriteScheduledGroup(t *testing.T) {
	now := builders.T0
	next := builders.At(12*time.Hour + 3*time.Minute + 7*time.Second)
	done := builders.At(-11 * time.Hour)
	g := builders.Group("a", "b").Named("nightly").Namespace("demo").Schedule("0 1 * * *", "Europe/Berlin").
		Condition(ready).
		Condition(metav1.Condition{Type: v1alpha1.ConditionRoundOverrun, Status: metav1.ConditionTrue, Reason: string(v1alpha1.ReasonRoundOverrun)}).
		ItemStatus(v1alpha1.ItemStatus{Name: "a", LastSuccess: done, NextEligibleAt: next, WaitReason: v1alpha1.WaitNextTick},
			v1alpha1.ItemStatus{Name: "b", LastFailure: done, FailureCount: 1}).Obj()
	g.Spec.Jitter, g.Status.NextRoundAt = "5m", next
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
	g := builders.Group().Schedule("@daily", "").Obj()
	if got := timing(g, now); got != `schedule="@daily"  timeZone=UTC` {
		t.Fatalf("timing() of a schedule before its first status = %q", got)
	}
}
