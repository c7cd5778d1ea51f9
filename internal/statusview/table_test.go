package statusview

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// ready is condition Ready of a group whose OaatType was found.
var ready = metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: string(v1alpha1.ReasonReady)}

func TestWrite(t *testing.T) {
	now := builders.T0
	ts := func(d time.Duration) *metav1.Time { return builders.At(-d) }
	g := builders.Group("a", "/srv/photos").Namespace("demo").Frequency("1m").Condition(ready).
		RunningIn("/srv/photos", "backups-srv-photos-x-2", ts(3*time.Second)).ItemStatus(
		v1alpha1.ItemStatus{Name: "a", LastSuccess: ts(90 * time.Second), LastFailure: ts(5 * time.Minute), LastExitCode: ptr.To[int32](0), LastReason: "Completed",
			NextEligibleAt: ts(-4 * time.Minute), WaitReason: v1alpha1.WaitSucceededRecently},
		v1alpha1.ItemStatus{Name: "/srv/photos", FailureCount: 2, LastFailure: ts(time.Minute), LastReason: "PodNotFound", WaitReason: v1alpha1.WaitRunning},
		v1alpha1.ItemStatus{Name: "due", NextEligibleAt: ts(time.Minute), WaitReason: v1alpha1.WaitCoolingOff},
		v1alpha1.ItemStatus{Name: "fresh"}).Obj()
	runs := []v1alpha1.OaatRun{
		{ObjectMeta: metav1.ObjectMeta{Name: "backups-x1"}, Spec: v1alpha1.OaatRunSpec{Item: "a"}, Status: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending}},
		{ObjectMeta: metav1.ObjectMeta{Name: "backups-x2"}, Spec: v1alpha1.OaatRunSpec{Item: "due"}, Status: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunSucceeded}},
	}
	var b strings.Builder
	if err := Write(&b, g, runs, now); err != nil {
		t.Fatal(err)
	}
	want := `demo/backups  type=sleeper  frequency=1m  failureCoolOff=none  ready=True  running=/srv/photos
  ITEM         RUNNING                            LAST SUCCESS  LAST FAILURE  FAILURES  LAST RESULT         NEXT
  a                                               90s ago       5m ago        0         Completed (exit 0)  in 4m (SucceededRecently)
  /srv/photos  yes, 3s in backups-srv-photos-x-2  never         60s ago       2         PodNotFound         Running
  due                                             never         never         0                             now
  fresh                                           never         never         0                             now
  on demand: 1 pending (a)
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestWriteVerified: a group with spec.verify has a VERIFIED column, the age of each item's newest
// verified result and whether its newest verification failed; its verification runs as
// "verifying".
func TestWriteVerified(t *testing.T) {
	now := builders.T0
	ts := func(d time.Duration) *metav1.Time { return builders.At(-d) }
	g := builders.Group("ok", "failing", "new").Namespace("demo").Frequency("1h").Condition(ready).
		RunningIn("new", "backups-new-x-9", ts(3*time.Second)).ItemStatus(
		v1alpha1.ItemStatus{Name: "ok", LastSuccess: ts(2 * time.Hour), LastVerified: ts(time.Hour), VerifiedRunFinishedAt: ts(2 * time.Hour)},
		v1alpha1.ItemStatus{Name: "failing", LastSuccess: ts(time.Hour), LastVerified: ts(5 * time.Hour), VerifiedRunFinishedAt: ts(6 * time.Hour),
			LastVerifyFailure: ts(50 * time.Minute)},
		v1alpha1.ItemStatus{Name: "new", LastSuccess: ts(time.Minute), WaitReason: v1alpha1.WaitRunning}).Obj()
	g.Spec.Verify = &v1alpha1.Verify{OaatType: "checker"}
	g.Status.CurrentRun.Purpose = v1alpha1.PurposeVerify
	var b strings.Builder
	if err := Write(&b, g, nil, now); err != nil {
		t.Fatal(err)
	}
	want := `demo/backups  type=sleeper  frequency=1h  failureCoolOff=none  ready=True  running=new
  ITEM     RUNNING                           LAST SUCCESS  LAST FAILURE  FAILURES  LAST RESULT  VERIFIED                          NEXT
  ok                                         120m ago      never         0                      result of 120m ago                now
  failing                                    60m ago       never         0                      FAILED 50m ago; result of 6h ago  now
  new      verifying, 3s in backups-new-x-9  60s ago       never         0                      never                             Running
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteWithoutOnDemandRuns(t *testing.T) {
	g := builders.Group().Named("idle").Namespace("demo").Obj()
	var b strings.Builder
	if err := Write(&b, g, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "on demand") {
		t.Fatalf("got an on-demand line without runs:\n%s", b.String())
	}
}

func TestSummaryNotReady(t *testing.T) {
	g := builders.Group().Condition(metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonOaatTypeNotFound), Message: `OaatType "x" not found`,
	}).Obj()
	if got, want := Summary(g), `ready=False (OaatTypeNotFound: OaatType "x" not found)  running=none`; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
}

func TestSummaryHeldGroup(t *testing.T) {
	g := builders.Group().Condition(ready).
		Condition(metav1.Condition{Type: v1alpha1.ConditionSuspended, Status: metav1.ConditionTrue, Reason: string(v1alpha1.ReasonSpecSuspend)}).
		Condition(metav1.Condition{Type: v1alpha1.ConditionParked, Status: metav1.ConditionFalse, Reason: string(v1alpha1.ReasonNoneParked)}).Obj()
	if got, want := Summary(g), `ready=True  suspended (SpecSuspend)  running=none`; got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
}
