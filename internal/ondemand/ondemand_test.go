package ondemand

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time {
	t := metav1.NewTime(t0.Add(d))
	return &t
}

// newRun is an open OaatRun of the group for item, kept an hour once finished.
func newOnDemandRun(group, item string) v1alpha1.OaatRun {
	return v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", CreationTimestamp: *at(0)},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: group, Item: item, TTLAfterFinished: "1h"},
	}
}

func TestExpiry(t *testing.T) {
	onDemandRun := newOnDemandRun("backups", "a")
	if _, ok := Expiry(&onDemandRun); ok {
		t.Fatal("an open OaatRun expires")
	}
	onDemandRun.Status = v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunRejected, FinishedAt: at(0)}
	onDemandRun.Spec.TTLAfterFinished = "2h"
	if got, ok := Expiry(&onDemandRun); !ok || !got.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("Expiry() = %v, %v", got, ok)
	}
	onDemandRun.Spec.TTLAfterFinished = ""
	if got, _ := Expiry(&onDemandRun); !got.Equal(t0.Add(time.Hour)) {
		t.Fatalf("without a TTL Expiry() = %v, want an hour after it finished", got)
	}
	onDemandRun.Spec.TTLAfterFinished = "soon"
	if got, _ := Expiry(&onDemandRun); !got.Equal(t0.Add(time.Hour)) {
		t.Fatalf("with an invalid TTL Expiry() = %v, want an hour after it finished", got)
	}
	onDemandRun.Status.FinishedAt = nil
	if _, ok := Expiry(&onDemandRun); ok {
		t.Fatal("an OaatRun with a final phase but no finishedAt expires")
	}
}

func TestOrphaned(t *testing.T) {
	onDemandRun := newOnDemandRun("gone", "a")
	status, ok := Orphaned(&onDemandRun, t0.Add(1500*time.Millisecond))
	if !ok || status.Phase != v1alpha1.OaatRunRejected || status.Reason != string(v1alpha1.ReasonGroupNotFound) ||
		status.Message != "OaatGroup gone does not exist in namespace ns" || !status.FinishedAt.Equal(at(time.Second)) {
		t.Fatalf("Orphaned() = %+v, %v; want Rejected GroupNotFound, finished at the whole second", status, ok)
	}
	onDemandRun.Status.Phase = v1alpha1.OaatRunInProgress
	if status, _ := Orphaned(&onDemandRun, t0); status.Phase != v1alpha1.OaatRunFailed || status.Reason != string(v1alpha1.ReasonGroupDeleted) {
		t.Fatalf("in progress: Orphaned() = %+v", status)
	}
	onDemandRun.Status.Phase = v1alpha1.OaatRunSucceeded
	if _, ok := Orphaned(&onDemandRun, t0); ok {
		t.Fatal("a finished OaatRun is settled again")
	}
}

func TestDecide(t *testing.T) {
	finished := newOnDemandRun("backups", "a")
	finished.Status = v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunSucceeded, FinishedAt: at(0)}
	open := newOnDemandRun("backups", "a")
	tests := []struct {
		name       string
		in         Input
		needsGroup bool
		want       Plan
	}{
		{name: "finished, kept until its TTL is over", in: Input{OnDemandRun: &finished, Now: t0.Add(20 * time.Minute)},
			want: Plan{RequeueAfter: 40 * time.Minute}},
		{name: "finished, TTL over", in: Input{OnDemandRun: &finished, Now: t0.Add(time.Hour)},
			want: Plan{Delete: true}},
		{name: "open, group found", in: Input{OnDemandRun: &open, GroupFound: true, Now: t0}, needsGroup: true,
			want: Plan{}},
		{name: "open, group not found", in: Input{OnDemandRun: &open, Now: t0}, needsGroup: true,
			want: Plan{Status: &v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunRejected, Reason: string(v1alpha1.ReasonGroupNotFound),
				Message: "OaatGroup backups does not exist in namespace ns", FinishedAt: at(0)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NeedsGroup(tt.in.OnDemandRun); got != tt.needsGroup {
				t.Fatalf("NeedsGroup() = %v, want %v", got, tt.needsGroup)
			}
			if diff := cmp.Diff(tt.want, Decide(tt.in)); diff != "" {
				t.Fatalf("Decide() (-want +got):\n%s", diff)
			}
		})
	}
}
