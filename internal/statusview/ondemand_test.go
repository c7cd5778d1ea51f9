package statusview

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestOnDemand(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	run := func(name, item string, age time.Duration, phase v1alpha1.OaatRunPhase) v1alpha1.OaatRun {
		return v1alpha1.OaatRun{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Spec:       v1alpha1.OaatRunSpec{Item: item},
			Status:     v1alpha1.OaatRunStatus{Phase: phase},
		}
	}
	tests := []struct {
		name string
		runs []v1alpha1.OaatRun
		want string
	}{
		{name: "none", want: ""},
		{name: "only finished", runs: []v1alpha1.OaatRun{
			run("g-a", "a", time.Minute, v1alpha1.OaatRunSucceeded),
			run("g-b", "b", time.Minute, v1alpha1.OaatRunFailed),
			run("g-c", "c", time.Minute, v1alpha1.OaatRunRejected),
		}, want: ""},
		{name: "pending oldest first, then in progress", runs: []v1alpha1.OaatRun{
			run("g-new", "item3", time.Second, v1alpha1.OaatRunPending),
			run("run-abc12", "item1", time.Hour, v1alpha1.OaatRunInProgress),
			run("g-old", "/srv/photos", time.Minute, v1alpha1.OaatRunPending),
			run("g-done", "item2", 2*time.Hour, v1alpha1.OaatRunSucceeded),
		}, want: "2 pending (/srv/photos, item3), in progress: item1 (run-abc12)"},
		{name: "not seen by the operator counts as pending", runs: []v1alpha1.OaatRun{
			run("g-x", "x", time.Second, ""),
		}, want: "1 pending (x)"},
		{name: "same second: by name", runs: []v1alpha1.OaatRun{
			run("g-b", "second", time.Second, v1alpha1.OaatRunPending),
			run("g-a", "first", time.Second, v1alpha1.OaatRunPending),
		}, want: "2 pending (first, second)"},
		{name: "only in progress", runs: []v1alpha1.OaatRun{
			run("g-r", "item1", time.Second, v1alpha1.OaatRunInProgress),
		}, want: "in progress: item1 (g-r)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OnDemand(tt.runs); got != tt.want {
				t.Errorf("OnDemand() = %q, want %q", got, tt.want)
			}
		})
	}
}
